#!/bin/bash
# The model loop on the H200 (a device call): a scripted 3-turn `anvil generate` on the cuda backend over the
# problems of the project's CUDA candidates at their real sizes (bench/scripts/model_loop_acceptance.py --gpu).
# Carried (gitignored): .carry/anvil (the CPU machine's build, stripped) with its libanvil_*.so, .carry/lib (the
# shared libraries of libcurl and SQLite, used only where the image lacks them) and .kb/ (the KernelBench problems
# named in ONLY). Results under $OUT.
#   run(command="bash bench/scripts/model_loop_gpu.sh", carry=[".carry", ".kb"])
set -u
cd "$(dirname "$0")/../.."
export ANVIL_SOURCE_DIR=$PWD PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1
OUT=${OUT:-$PWD/bench-out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv,noheader; nproc
python3 -c 'import torch; print("torch", torch.__version__, torch.cuda.is_available())'
if ldd .carry/anvil | grep -q "not found"; then
  echo "missing on the image: $(ldd .carry/anvil | grep 'not found' | awk '{print $1}' | tr '\n' ' ')"
  export LD_LIBRARY_PATH=$PWD/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
ldd .carry/anvil | grep -E "not found|curl|sqlite"
.carry/anvil --version || exit 1
timeout "${LIMIT:-520}" python3 bench/scripts/model_loop_acceptance.py --gpu --only "${ONLY:-1/1,1/40,2/12,2/63,3/1,3/3}" \
  --problems 20 --anvil .carry/anvil --kernelbench .kb --work "$OUT/work" --out "$OUT/model_loop_gpu.md" \
  -- -j "${JOBS:-2}" --timeout 40 --trials 3 ${FLAGS:-} > "$OUT/acceptance.log" 2>&1
echo "exit $?"
tail -c 6000 "$OUT/acceptance.log"
rm -rf "$OUT/work/kernelbench" "$OUT/work/run.candidates"
ls -la "$OUT/work"
