#!/bin/bash
# Containment on the GPU machine (issue 35; a device call): the same eight candidates of tests/gpu/kernelbench_run at
# KernelBench's real sizes judged with the default quotas (MODE=quotas: --quota-memory auto, --quota-pids 4096) or
# none (MODE=none), to see that quotas change no honest CUDA verdict and what they cost. Carried (gitignored):
# .carry/ (the CPU machine's build, stripped, and its libanvil_*.so; .carry/lib: libcurl and SQLite where the image
# lacks them) and .kb/ (the problems: level1/1, 1/40, 2/12, 2/63, 3/1).
#   run(command="MODE=quotas bash bench/scripts/quota_gpu.sh", carry=[".carry", ".kb"])
#   run(command="MODE=none bash bench/scripts/quota_gpu.sh", carry=[".carry", ".kb"])
set -u
cd "$(dirname "$0")/../.."
export ANVIL_SOURCE_DIR=$PWD PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1
OUT=${OUT:-$PWD/bench-out}
MODE=${MODE:-quotas}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv,noheader; nproc; free -g | head -2
if ldd .carry/anvil | grep -q "not found"; then export LD_LIBRARY_PATH=$PWD/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; fi
.carry/anvil --version || exit 1
cat /proc/self/cgroup | head -12
.carry/anvil sandbox-check --backend cuda 2>&1 | tail -4
R=tests/gpu/kernelbench_run
: > "$OUT/list.jsonl"
for pair in "level1/1_Square_matrix_multiplication_.py level_1_problem_1_sample_0_kernel.py" \
            "level1/1_Square_matrix_multiplication_.py level_1_problem_1_sample_1_kernel.cu" \
            "level1/40_LayerNorm.py level_1_problem_40_sample_0_kernel.cu" \
            "level1/40_LayerNorm.py level_1_problem_40_sample_2_kernel.cu" \
            "level2/12_Gemm_Multiply_LeakyReLU.py level_2_problem_12_sample_0_kernel.py" \
            "level2/63_Gemm_ReLU_Divide.py level_2_problem_63_sample_1_kernel.py" \
            "level3/1_MLP.py level_3_problem_1_sample_1_kernel.cu" \
            "level3/1_MLP.py level_3_problem_1_sample_2_kernel.py"; do
  set -- $pair
  echo "{\"task\": \"$PWD/.kb/$1\", \"candidate\": \"$PWD/$R/$2\"}" >> "$OUT/list.jsonl"
done
flags=()
[ "$MODE" = none ] && flags=(--quota-memory none --quota-pids 0)
start=$(date +%s)
timeout "${LIMIT:-540}" .carry/anvil eval --backend cuda --list "$OUT/list.jsonl" -j 1 --trials 2 --timeout 40 --iters 10 \
  --baselines eager --json -q --check-expected "${flags[@]}" -o "$OUT/verdicts_$MODE.jsonl" > /dev/null 2> "$OUT/eval_$MODE.log"
echo "exit $? after $(( $(date +%s) - start )) s"
tail -5 "$OUT/eval_$MODE.log"
python3 - "$OUT/verdicts_$MODE.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    v = json.loads(line)
    run = v["gates"]["run"]
    print(v["candidate"]["path"].rsplit("/", 1)[-1], v["status"], round(v["seconds"], 1), v.get("quotas"),
          "cgroup" in run.get("sandbox", []), run.get("stage"), (run.get("message") or "")[:100])
PY
