#!/bin/bash
# The trivial-output guard over KernelBench's problems at their real sizes, on the GPU machine (a device call; issue
# 33, step 5): every problem whose trial is under 256 MiB at its real size runs there, the others at
# bench/kernelbench_small.json's size. Carried (gitignored): .kb-all/ (a copy of ../shared/kernelbench: level1..3)
# and .whl/ (einops' wheel, which the two Mamba2 problems import; the image lacks it).
#   run(command="bash bench/scripts/trivial_guard_gpu.sh", carry=[".kb-all", ".whl"])
# One call stops starting problems after 480 s; a second call on the still-warm machine goes on from .guard-run/
# (the rows are also in $OUT/trivial_guard_gpu.jsonl: copied back into .guard-run/ and carried, a cold one does too).
# The problems over 256 MiB a trial with no shrunk size (run at their real size on cuda) went one at a time, after
# their rows were taken out of the jsonl: JOBS=1 DEADLINE=300 STOP_AFTER=450 bash bench/scripts/trivial_guard_gpu.sh
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/bench-out}
mkdir -p "$OUT" .guard-run
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl &&
    export PYTHONPATH=/tmp/site
fi
nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv,noheader
python3 -c 'import torch; print("torch", torch.__version__, torch.cuda.is_available())'
df -h /tmp | tail -1
PYTHONUNBUFFERED=1 python3 bench/scripts/trivial_guard_table.py --sizes auto --device cuda --kernelbench .kb-all \
  --deadline ${DEADLINE:-120} --jobs ${JOBS:-8} --stop-after ${STOP_AFTER:-480} --resume .guard-run/trivial_guard_gpu.jsonl --progress "$OUT/rows.jsonl" \
  --out .guard-run/trivial_guard_gpu.md 2> "$OUT/trivial_guard_gpu.log"
cp .guard-run/trivial_guard_gpu.md .guard-run/trivial_guard_gpu.jsonl "$OUT/"
tail -5 "$OUT/trivial_guard_gpu.log"
head -8 "$OUT/trivial_guard_gpu.md"
