#!/bin/bash
# A simulated GRPO step through the reward service on the GPU machine (issue 38, item 3, check 1; a device call):
# 128 kernelbench-format CUDA candidates for 16 tasks (8 a group) posted at once through the verl adapter to
# `anvil serve --backend cuda`, against `anvil eval --backend cuda --list` with the same -j, after a warm-up that
# prepares the tasks and builds the precompiled headers (bench/scripts/grpo_step_gpu.py says what the candidates are).
# Carried (gitignored): .carry/ (the CPU machine's build at a52eb8c, stripped, its libanvil_*.so, .carry/lib for
# libraries the image may lack, and .carry/src: python/, include/, examples/, tests/ of that commit) and .kb/grpo
# (the shrunk tasks and the candidates: `python3 bench/scripts/grpo_step_gpu.py make` on the CPU machine first).
#   run(command="bash bench/scripts/grpo_step_gpu.sh", carry=[".carry", ".kb"], timeout_s=600)
set -u
cd "$(dirname "$0")/../.."
export ANVIL_SOURCE_DIR=$PWD/.carry/src PYTHONPATH=$PWD/.carry/src/python PYTHONUNBUFFERED=1
OUT=${OUT:-$PWD/bench-out}
mkdir -p "$OUT"
t0=$(date +%s)
nvidia-smi --query-gpu=name,memory.used,memory.total,driver_version --format=csv,noheader; nproc; free -g | head -2
python3 -c 'import torch; print("torch", torch.__version__, torch.cuda.is_available(), torch.cuda.get_device_name(0))'
if ldd .carry/anvil | grep -q "not found"; then
  echo "missing on the image: $(ldd .carry/anvil | grep 'not found' | awk '{print $1}' | tr '\n' ' ')"
  export LD_LIBRARY_PATH=$PWD/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
ldd .carry/anvil | grep -E "not found|curl|sqlite"
.carry/anvil --version || exit 1
timeout 60 .carry/anvil sandbox-check --backend cuda 2>&1 | tail -8
echo "setup took $(( $(date +%s) - t0 )) s"
timeout "${LIMIT:-560}" python3 bench/scripts/grpo_step_gpu.py run --anvil .carry/anvil --dir .kb/grpo \
  --jobs "${JOBS:-4}" --out "$OUT" --budget "$(( ${LIMIT:-560} - $(date +%s) + t0 - 10 ))" 2>&1 | tee "$OUT/grpo_step.log"
echo "exit ${PIPESTATUS[0]} after $(( $(date +%s) - t0 )) s"
tail -3 "$OUT"/eval1.log "$OUT"/serve.log 2>/dev/null
rm -rf "$OUT"/serve-work "$OUT"/*.list.jsonl
# At most 8 files come back: the logs and verdicts go in one archive.
tar czf /tmp/grpo_logs.tgz -C "$OUT" --exclude=grpo_step.json --exclude=grpo_step.md --exclude=grpo_step.log . &&
  mv /tmp/grpo_logs.tgz "$OUT/logs.tgz" &&
  find "$OUT" -type f ! -name grpo_step.json ! -name grpo_step.md ! -name grpo_step.log ! -name logs.tgz -delete
ls -la "$OUT"
