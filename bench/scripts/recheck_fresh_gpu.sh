#!/bin/bash
# perf.recheck on level 2's 56_Matmul_Sigmoid_Sum in the verdict that prepares the task (a fresh cache): the case
# recheck_detail_gpu.sh found failing (later verdicts of the prepared task pass). Prints the recheck's message.
#   run(command="bash bench/scripts/recheck_fresh_gpu.sh", carry=[".carry", ".kb"])
set -u
cd "$(dirname "$0")/../.."
export ANVIL_SOURCE_DIR=$PWD PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1
if ldd .carry/anvil | grep -q "not found"; then export LD_LIBRARY_PATH=$PWD/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; fi
for i in ${RUNS:-1 2}; do
  timeout 150 .carry/anvil eval --backend cuda --cache-dir "$(mktemp -d)" --json -q -t .kb/level2/56_Matmul_Sigmoid_Sum.py \
    -c tests/gpu/kernelbench_run/level_2_problem_56_sample_1_kernel.py --trials 3 --iters 20 --baselines none \
    | python3 -c "
import json, sys
v = json.load(sys.stdin)
print('$i', v['status'], v['gates']['perf'].get('rechecked'), round(v['seconds'], 1), v['stage_seconds'].get('prepare'))
for h in v['gates']['legal']['hits']:
    print('   ', h['rule'], h['message'][:1200])"
done
