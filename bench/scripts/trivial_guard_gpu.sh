#!/bin/bash
# The trivial-output guard over KernelBench's problems at their real sizes, on the GPU machine (a device call; issue
# 33, step 5): every problem whose trial is under 256 MiB at its real size runs there, the others at
# bench/kernelbench_small.json's size. Carried (gitignored): .kb-all/ (a copy of ../shared/kernelbench: level1..3).
#   run(command="bash bench/scripts/trivial_guard_gpu.sh", carry=[".kb-all"])
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/bench-out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv,noheader
python3 -c 'import torch; print("torch", torch.__version__, torch.cuda.is_available())'
python3 bench/scripts/trivial_guard_table.py --sizes auto --device cuda --kernelbench .kb-all --deadline 120 \
  --out "$OUT/trivial_guard_h200.md" 2> "$OUT/trivial_guard_h200.log"
tail -5 "$OUT/trivial_guard_h200.log"
head -12 "$OUT/trivial_guard_h200.md"
