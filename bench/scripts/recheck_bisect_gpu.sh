#!/bin/bash
# Runs `--trial-data files`, retired after commit 0621339: to reproduce, run it from a checkout of that commit.
# perf.recheck on honest candidates (all_problems run of 2026-12-06 on an H100: L2/56, L3/2 own candidates, the
# reference itself for L1/8, 58, 60, 61, 75): which path makes the timed sets' expected outputs differ. Prints each
# variant's verdict and rule, then whether torch's TF32 switches and a matmul's result are the same on a thread.
# e6bb516 fixed one cause (comparisons drew from the generator task code seeds): with it, all should pass.
#   run(command="bash bench/scripts/recheck_bisect_gpu.sh", carry=[".carry", ".kb"])
set -u
cd "$(dirname "$0")/../.."
export ANVIL_SOURCE_DIR=$PWD PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1
if ldd .carry/anvil | grep -q "not found"; then export LD_LIBRARY_PATH=$PWD/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; fi
python3 - <<'PY'
import threading, torch
from anvil_py.task_worker import set_tf32
print("torch", torch.__version__)
for mode in ("off", "default"):
    set_tf32(mode)
    main = (torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32,
            torch.get_float32_matmul_precision())
    seen = {}
    t = threading.Thread(target=lambda: seen.update(v=(torch.backends.cudnn.allow_tf32,
                         torch.backends.cuda.matmul.allow_tf32, torch.get_float32_matmul_precision())))
    t.start(); t.join()
    print(f"set_tf32({mode}): main thread {main}, other thread {seen['v']}")
torch.manual_seed(0)
a = torch.rand(2048, 4096, device="cuda"); b = torch.rand(4096, 2048, device="cuda")
set_tf32("off"); ref = a @ b
out = {}
def other():
    set_tf32("off"); out["x"] = a @ b
t = threading.Thread(target=other); t.start(); t.join()
print("matmul main vs thread, both off: max abs diff", (ref - out["x"]).abs().max().item())
PY
A=$PWD/.carry/anvil
C=$HOME/.cache/anvil-bisect
run() {
  local label=$1; shift
  local out
  out=$(timeout 240 "$@" 2>/tmp/err.txt | python3 -c "
import json, sys
v = json.loads(sys.stdin.read())
hits = [h['rule'] for h in v['gates']['legal']['hits'] if h.get('severity') == 'cheat']
print(v['status'], hits, v['gates']['perf'].get('timing_sets'), v['gates']['perf'].get('timed_inputs'), v['gates']['run'].get('trial_data'))" 2>&1)
  echo "$label: $out"; [ -n "$out" ] || tail -3 /tmp/err.txt
}
T=.kb/level2/56_Matmul_Sigmoid_Sum.py
K=tests/gpu/kernelbench_run/level_2_problem_56_sample_1_kernel.py
common=(eval --backend cuda --cache-dir "$C" --json -q -t "$T" -c "$K" --trials 3 --iters 20 --baselines none)
run "default" "$A" "${common[@]}"
run "sets preloaded" env ANVIL_CUDA_SETS_WRITTEN=0 "$A" "${common[@]}"
run "trial-data files" "$A" "${common[@]}" --trial-data files
run "default again" "$A" "${common[@]}"
run "iters 5" "$A" "${common[@]/20/5}"
# Side by side (sessions of the one task server comparing while another makes timed sets): the four own candidates of
# the two problems, twice each, two at a time.
J=$(mktemp)
for f in tests/gpu/kernelbench_run/level_2_problem_56_sample_{0,1}_kernel.* \
         tests/gpu/kernelbench_run/level_3_problem_2_sample_{0,1}_kernel.*; do
  t=.kb/level2/56_Matmul_Sigmoid_Sum.py; case "$f" in *level_3_*) t=.kb/level3/2_ShallowWideMLP.py ;; esac
  printf '{"task": "%s", "candidate": "%s"}\n' "$PWD/$t" "$PWD/$f" >> "$J"
done
cat "$J" "$J" > "$J.2"
timeout 400 "$A" eval --backend cuda --cache-dir "$C" --json -q --list "$J.2" -j 2 --trials 3 --iters 20 \
  --baselines none 2>/tmp/err.txt | python3 -c "
import json, sys
for line in sys.stdin:
    v = json.loads(line)
    hits = [h['rule'] for h in v['gates']['legal']['hits'] if h.get('severity') == 'cheat']
    print('side by side:', v['candidate']['path'].rsplit('/', 1)[-1], v['status'], hits)"
