#!/bin/bash
# Runs `--trial-data files`, retired after commit 0621339: to reproduce, run it from a checkout of that commit.
# perf.recheck on honest candidates, in detail (issue 38): the recheck's own message and the timing-set facts, for
# level 2's 56_Matmul_Sigmoid_Sum and level 3's 2_ShallowWideMLP, four times each (recheck_bisect_gpu.sh found them
# flaky with the task server, passing with --trial-data files).
#   run(command="bash bench/scripts/recheck_detail_gpu.sh", carry=[".carry", ".kb"])
set -u
cd "$(dirname "$0")/../.."
export ANVIL_SOURCE_DIR=$PWD PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1
if ldd .carry/anvil | grep -q "not found"; then export LD_LIBRARY_PATH=$PWD/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; fi
OUT=${OUT:-$PWD/bench-out}
mkdir -p "$OUT"
C=$HOME/.cache/anvil-detail
for pair in "level2/56_Matmul_Sigmoid_Sum.py level_2_problem_56_sample_1_kernel.py" \
            "level3/2_ShallowWideMLP.py level_3_problem_2_sample_0_kernel.py"; do
  set -- $pair
  for i in 1 2 3; do
    for mode in server files; do
      timeout 150 .carry/anvil eval --backend cuda --cache-dir "$C" --json -q -t ".kb/$1" \
        -c "tests/gpu/kernelbench_run/$2" --trials 3 --iters 20 --baselines none --trial-data $mode \
        > "$OUT/detail_${2%.py}_${mode}_$i.json" 2>>"$OUT/detail.err"
      python3 - "$OUT/detail_${2%.py}_${mode}_$i.json" "$2 $mode $i" <<'PY'
import json, sys
try:
    v = json.load(open(sys.argv[1]))
except Exception as e:
    print(sys.argv[2], "no verdict", e); sys.exit()
p = v["gates"]["perf"]
hits = [h for h in v["gates"]["legal"]["hits"] if h.get("rule") == "perf.recheck"]
print(sys.argv[2], v["status"], "sets", p.get("timing_sets"), p.get("timed_inputs"), "rechecked", p.get("rechecked"))
for h in hits:
    print("   ", h["message"][:900])
PY
    done
  done
done
