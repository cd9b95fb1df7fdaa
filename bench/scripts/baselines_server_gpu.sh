#!/bin/bash
# Baselines timed by the task server against the baseline worker (ANVIL_BASELINE_WORKER=1) on the GPU (issue 38):
# the same candidates, a fresh cache each way so both measure; prints each verdict's eager and compile medians,
# the baselines stage beyond torch.compile's own compile, and the verdict's seconds.
#   run(command="bash bench/scripts/baselines_server_gpu.sh", carry=[".carry", ".kb"])
set -u
cd "$(dirname "$0")/../.."
export ANVIL_SOURCE_DIR=$PWD PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1
if ldd .carry/anvil | grep -q "not found"; then export LD_LIBRARY_PATH=$PWD/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; fi
OUT=${OUT:-$PWD/bench-out}
mkdir -p "$OUT"
J=$(mktemp)
for p in "level1/1_Square_matrix_multiplication_.py level_1_problem_1_sample_0_kernel.py" \
         "level1/20_LeakyReLU.py level_1_problem_20_sample_0_kernel.py" \
         "level2/56_Matmul_Sigmoid_Sum.py level_2_problem_56_sample_1_kernel.py"; do
  set -- $p
  printf '{"task": "%s", "candidate": "%s"}\n' "$PWD/.kb/$1" "$PWD/tests/gpu/kernelbench_run/$2" >> "$J"
done
for mode in server worker; do
  w=0; [ $mode = worker ] && w=1
  ANVIL_BASELINE_WORKER=$w timeout 200 .carry/anvil eval --backend cuda --cache-dir "$(mktemp -d)" --json -q \
    --list "$J" --trials 3 --iters 20 --baselines eager,compile -j 1 > "$OUT/baselines_$mode.jsonl" 2>>"$OUT/baselines.err"
  python3 - "$OUT/baselines_$mode.jsonl" "$mode" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    v = json.loads(line)
    p = v["gates"]["perf"]
    st = v["stage_seconds"]
    beyond = st.get("baselines", 0) - (v.get("baseline_compile_seconds") or 0)
    print(sys.argv[2], v["task"]["name"][:28], v["status"], "eager", (p.get("eager") or {}).get("median_ms"),
          "compile", (p.get("compile") or {}).get("median_ms"), p.get("eager_error", "")[:80], p.get("compile_error", "")[:80],
          "baselines beyond compile %.2f s" % beyond, "verdict %.1f s" % v["seconds"])
PY
done
