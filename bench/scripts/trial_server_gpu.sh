#!/bin/bash
# Runs `--trial-data files`, retired after commit 0621339: to reproduce, run it from a checkout of that commit.
# --trial-data server on CUDA (issue 38, steps 1-2 before step 4; a device call): the eight candidates of
# tests/gpu/kernelbench_run that bench/scripts/quota_gpu.sh judges, at KernelBench's real sizes, judged with the
# trials' data from files and from the task server, to see the verdicts and the comparisons agree on the device and
# what each path costs. The task server makes inputs and the reference's outputs on the GPU and compares there; the
# candidate's buffers are still host memfds (step 4 replaces them). Carried (gitignored): .carry/ (this build,
# stripped, its libanvil_*.so, .carry/lib) and .kb/ (see quota_gpu.sh); python/ is the working tree's.
#   run(command="bash bench/scripts/trial_server_gpu.sh", carry=[".carry", ".kb"])
# MODES: the passes in order (default "files server files server"; "server": each timed call's inputs written
# after its `ready`, the default; "preloaded": the server with ANVIL_CUDA_SETS_WRITTEN=0, the timed sets loaded
# before the warmup; "written": the server with ANVIL_CUDA_SETS_WRITTEN=1, the same as "server" since the
# written sets became the default); EXTRA: eval flags added to every
# pass (EXTRA="--held-out auto": the held-out sets too). The table compares the last pass of each mode with files.
set -u
cd "$(dirname "$0")/../.."
export ANVIL_SOURCE_DIR=$PWD PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1
OUT=${OUT:-$PWD/bench-out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv,noheader
if ldd .carry/anvil | grep -q "not found"; then export LD_LIBRARY_PATH=$PWD/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; fi
.carry/anvil --version || exit 1
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
for mode in ${MODES:-files server files server}; do
  rm -f "$OUT/verdicts_$mode.jsonl"  # -o resumes: each pass judges anew.
  start=$(date +%s.%N)
  data=$mode written=1
  [ "$mode" = written ] && data=server
  [ "$mode" = preloaded ] && data=server written=0
  ANVIL_CUDA_SETS_WRITTEN=$written timeout "${LIMIT:-200}" .carry/anvil eval --backend cuda --list "$OUT/list.jsonl" -j 1 --trials 2 --timeout 60 \
    --iters 10 --baselines eager --json -q ${EXTRA:-} --trial-data $data -o "$OUT/verdicts_$mode.jsonl" > /dev/null \
    2> "$OUT/eval_$mode.log"
  echo "$mode: exit $? after $(python3 -c "import time; print(round(time.time() - $start, 1))") s"
  tail -3 "$OUT/eval_$mode.log"
done
python3 - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
def load(mode):
    return {json.loads(l)["candidate"]["path"].rsplit("/", 1)[-1]: json.loads(l) for l in open(f"{out}/verdicts_{mode}.jsonl")}
import os
files = load("files")
def details(v):
    return [(t["trial"], t["problem"], [(o["name"], o.get("mismatches"), o.get("max_abs_error")) for o in t["outputs"]])
            for t in v["gates"]["correct"]["details"]]
def perf(v):
    p = v.get("gates", {}).get("perf") or {}
    return (p.get("candidate") or {}).get("median_ms"), p.get("timed_inputs"), p.get("rechecked")
def held(v):
    return [(h["trial"], h["ok"], h["problem"]) for h in v["gates"]["correct"]["held_out"]]
for mode in ("server", "written", "preloaded"):
    if not os.path.exists(f"{out}/verdicts_{mode}.jsonl"):
        continue
    server = load(mode)
    print(f"\nfiles against {mode}:\n")
    print(f"| candidate | files | {mode} | trial_data | same comparison | run s files / {mode} | make_trials s ({mode}) |"
          f" median ms files / {mode} | timed_inputs {mode} | rechecked {mode} | held-out sets |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name in files:
        f, s = files[name], server.get(name, {})
        same = details(f) == details(s) and held(f) == held(s) if s else None
        mf, ms, ti, rc = perf(f)[0], *(perf(s) if s else (None, None, None))
        print(f"| {name} | {f['status']} | {s.get('status')} | {s.get('gates', {}).get('run', {}).get('trial_data')} |"
              f" {same} | {f['stage_seconds'].get('run', 0):.2f} / {s.get('stage_seconds', {}).get('run', 0):.2f} |"
              f" {s.get('stage_seconds', {}).get('make_trials', 0):.2f} | {mf} / {ms} | {ti} | {rc} |"
              f" {len(held(s)) if s else None} |")
        if s and details(f) != details(s):
            print(f"   files:", details(f)[:2], f"\n   {mode}:", details(s)[:2])
PY
