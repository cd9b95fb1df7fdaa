#!/bin/bash
# Issue 38's first target, in resumable device calls: every problem of KernelBench at its real size gets a verdict,
# with the project's own candidates where they exist and the reference itself as the candidate elsewhere
# (bench/scripts/all_problems.py). Each call runs for LIMIT seconds (default 540) and leaves the verdicts in
# $OUT/all_own.jsonl and $OUT/all_reference.jsonl; copy them into .gpu-done/ and carry it in the next call, which
# skips what is judged (anvil kernelbench --out resumes). Carried (gitignored): .carry/ (this build, stripped, its
# libanvil_*.so, .carry/lib), .kb-all/ (../shared/kernelbench: level1/ level2/ level3/; KB names another), .gpu-done/
#   run(command="bash bench/scripts/all_problems_gpu.sh", carry=[".carry", ".kb-all", ".gpu-done"])
# JOBS: candidates side by side (default 2); FLAGS: more `anvil kernelbench` flags; KB: the tree (default .kb-all).
set -u
cd "$(dirname "$0")/../.."
export ANVIL_SOURCE_DIR=$PWD PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1
OUT=${OUT:-$PWD/bench-out}
LIMIT=${LIMIT:-540}
mkdir -p "$OUT"
if ldd .carry/anvil | grep -q "not found"; then export LD_LIBRARY_PATH=$PWD/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; fi
nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv,noheader
for part in own reference; do
  [ -f .gpu-done/all_$part.jsonl ] && cp .gpu-done/all_$part.jsonl "$OUT/"
done
RUNS=$(mktemp -d)
python3 bench/scripts/all_problems.py --kernelbench ${KB:-.kb-all} --out "$RUNS" || exit 1
start=$SECONDS
common=(--kernelbench ${KB:-.kb-all} --backend cuda --trials 3 --timeout 120 --iters 20 --baselines eager,compile
        --jobs "${JOBS:-2}" ${FLAGS:-})
timeout $((LIMIT - (SECONDS - start))) .carry/anvil kernelbench --run "$RUNS/own" "${common[@]}" \
  --out "$OUT/all_own.jsonl" > "$OUT/all_own.log" 2>&1
echo "own: exit $? after $((SECONDS - start)) s"; tail -12 "$OUT/all_own.log"
left=$((LIMIT - (SECONDS - start)))
if [ "$left" -gt 30 ]; then
  ANVIL_STATIC_VERDICTS=0 timeout "$left" .carry/anvil kernelbench --run "$RUNS/reference" "${common[@]}" \
    --policy kernelbench-v0.1 --out "$OUT/all_reference.jsonl" > "$OUT/all_reference.log" 2>&1
  echo "reference: exit $? after $((SECONDS - start)) s"; tail -12 "$OUT/all_reference.log"
fi
for part in own reference; do
  [ -f "$OUT/all_$part.jsonl" ] && echo "$part: $(wc -l < "$OUT/all_$part.jsonl") verdicts so far"
done
# Where the preparations' time went (spec.json's prepare_ms, docs/spec.md), one line per prepared task.
python3 - "${ANVIL_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/anvil}" > "$OUT/prepare_phases.jsonl" <<'PY'
import glob, json, os, sys
for path in sorted(glob.glob(os.path.join(sys.argv[1], "**", "spec.json"), recursive=True)):
    try:
        spec = json.load(open(path))
    except (OSError, ValueError):
        continue
    if "prepare_ms" in spec:
        print(json.dumps({"task": spec["task"]["path"], "work_ms": spec.get("work_ms"),
                          "trial_bytes": spec.get("trial_bytes"), "prepare_ms": spec["prepare_ms"]}))
PY
echo "prepare phases: $(wc -l < "$OUT/prepare_phases.jsonl") specs"
