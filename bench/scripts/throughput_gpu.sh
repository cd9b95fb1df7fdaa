#!/bin/bash
# anvil bench throughput on a GPU machine over the kernelbench-format GPU candidates of tests/gpu/kernelbench_run,
# with a memory log, then every verdict checked against the candidate's `anvil-expect` header.
#   SET=small (default): the 12 candidates of L1/1, L1/40 and L2 (tasks under 1 GiB per trial)
#   SET=all: the 36 L1/L2 candidates (24 of them on multi-GB, streamed tasks; 17 of those new in issue 38)
#   SET=multigb: those 24 alone (level 1 but problems 1 and 40: issue 38's second target; 23 pass, 1 compile_error)
# Env: ANVIL_BIN (default build/anvil), ANVIL_KERNELBENCH (the KernelBench problems), OUT (results; default
# bench-out), JOBS (run slots, 2), CJOBS (compiles ahead; default half the cores), SAMPLE (stock-path sample, 3),
# BENCH_LIMIT (seconds, 540), COPIES (each candidate this many times, 1), FLAGS (more bench flags, e.g. --no-stock, or
# --no-anvil for more stock samples in a call of their own). Results of earlier runs: bench/results/throughput_h200.md.
set -u
cd "$(dirname "$0")/../.."
export ANVIL_SOURCE_DIR=$PWD PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1
A=${ANVIL_BIN:-$PWD/build/anvil}
KB=${ANVIL_KERNELBENCH:?set ANVIL_KERNELBENCH to the KernelBench problems (level1/, level2/, ...)}
OUT=${OUT:-$PWD/bench-out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=index,name --format=csv,noheader; nproc
# A build carried from the CPU machine (.carry/anvil) finds the libraries the image lacks in .carry/lib.
if ldd "$A" | grep -q "not found"; then export LD_LIBRARY_PATH=$PWD/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; fi
R=$(mktemp -d); W=$(mktemp -d -u)
if [ "${SET:-small}" = all ]; then
  cp tests/gpu/kernelbench_run/level_[12]_*.py "$R"/
elif [ "$SET" = multigb ]; then
  cp tests/gpu/kernelbench_run/level_1_*.py "$R"/
  rm -f "$R"/level_1_problem_1_* "$R"/level_1_problem_40_*
else
  for p in level_1_problem_1_ level_1_problem_40_ level_2_; do cp tests/gpu/kernelbench_run/${p}*.py "$R"/; done
fi
# COPIES=N: every candidate N times (an RL batch samples several candidates per task); each copy gets its own
# extension name from the bench, so each is built cold.
if [ "${COPIES:-1}" -gt 1 ]; then
  for f in "$R"/*.py; do  # level_L_problem_P_sample_S_kernel.py -> sample K0S for copy K (samples are < 10)
    for k in $(seq 2 "$COPIES"); do cp "$f" "$(echo "$f" | sed -E "s/_sample_([0-9]+)_kernel/_sample_${k}0\1_kernel/")"; done
  done
fi
echo "$(ls "$R" | wc -l) candidates"
# Every 10 s: the machine's memory, and the verdicts so far copied to $OUT (a call cut by the device's limit still
# brings back what was judged).
(while true; do
   echo "$(date +%s) used/avail MB $(free -m | awk '/Mem:/{print $3, $7}') shm MB $(du -sm /dev/shm 2>/dev/null | cut -f1) load $(cut -d' ' -f1 /proc/loadavg)"
   cp "$W"/*_verdicts.jsonl "$W"/stock_outcomes.jsonl "$OUT"/ 2>/dev/null
   sleep 10
 done) > "$OUT/mem.log" 2>&1 &
LOGGER=$!
start=$(date +%s)
timeout "${BENCH_LIMIT:-540}" "$A" bench throughput --run "$R" --kernelbench "$KB" --backend cuda -j "${JOBS:-2}" \
  ${CJOBS:+--compile-jobs $CJOBS} --gpus 1 --work "$W" --timeout 30 --stock-sample "${SAMPLE:-3}" --stock-timeout 120 ${FLAGS:-} \
  --json-out "$OUT/throughput.json" --md-out "$OUT/throughput.md" > "$OUT/bench_stdout.txt" 2> "$OUT/bench_stderr.txt"
echo "bench rc=$? $(( $(date +%s) - start )) s"
kill $LOGGER 2>/dev/null
cat "$OUT/throughput.md" 2>/dev/null
cp "$W"/cold_verdicts.jsonl "$W"/steady_verdicts.jsonl "$W"/fresh_verdicts.jsonl "$W"/warm_verdicts.jsonl "$W"/stock_outcomes.jsonl "$OUT"/ 2>/dev/null
OUT=$OUT python3 - <<'PY'
import json, os, re
out = os.environ["OUT"]
for name in ("cold", "steady", "fresh", "warm"):
    p = os.path.join(out, f"{name}_verdicts.jsonl")
    if not os.path.exists(p):
        print(name, "no verdicts")
        continue
    bad, n = [], 0
    for line in open(p):
        v = json.loads(line)
        n += 1
        f = v["candidate"]["path"]
        m = re.search(r"anvil-expect:\s*(\w+)", open(f).read()[:2048])
        if m and m.group(1) != v["status"]:
            bad.append((os.path.basename(f), v["status"], m.group(1), v["feedback"][:200]))
    print(name, n, "verdicts; not as expected:", bad)
PY
