#!/bin/bash
# Issue 38's filesystem target on a GPU machine: during each multi-GB verdict the used bytes of every filesystem
# anvil or its children write (the cache, TMPDIR, /dev/shm), sampled every 50 ms (bench/scripts/fs_watch.py), stay
# within the build's outputs + 64 MiB. The candidates: the passing kernelbench-format level-1 candidates of
# tests/gpu/kernelbench_run but those of problems 1 and 40 (small tensors): 23 multi-GB problems. Their builds are
# made first (compile only, ANVIL_ASSUME_NO_GPU=1, into the same cache), so each watched verdict's allowance is the
# 64 MiB alone. Resumable: a call that carries .gpu-done/ (fs_*.json of an earlier call copied there) skips those.
# Carried (gitignored): .carry/ (this build, stripped, its libanvil_*.so, .carry/lib), .kb/ (../shared/kernelbench's
# level folders).
#   run(command="bash bench/scripts/fs_target_gpu.sh", carry=[".carry", ".kb", ".gpu-done"])
# The device tool brings back only a few files: the per-candidate files go back packed in $OUT/fs_target.tar.gz
# (unpack it into .gpu-done/ to resume).
# Env: OUT (results; default bench-out), LIMIT (seconds from the script's start after which no verdict starts, 420;
# each verdict is cut at 570 s from the start, under the device tool's 600), ANVIL_BIN (.carry/anvil).
set -u
start=$(date +%s)
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/bench-out}
mkdir -p "$OUT"
if ldd .carry/anvil 2>/dev/null | grep -q "not found"; then
  export LD_LIBRARY_PATH=$PWD/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
export ANVIL_SOURCE_DIR=$PWD PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1
A=${ANVIL_BIN:-$PWD/.carry/anvil}
CACHE=${CACHE:-$HOME/.cache/anvil-fs-target}
mkdir -p "$CACHE"
R=tests/gpu/kernelbench_run
candidates=()
for f in "$R"/level_1_problem_*_kernel.py; do
  case "$(basename "$f")" in level_1_problem_1_*|level_1_problem_40_*) continue ;; esac
  head -1 "$f" | grep -q "anvil-expect: pass" && candidates+=("$f")
done
task_of() {  # level_1_problem_27_sample_0_kernel.py -> .kb/level1/27_*.py
  local p; p=$(basename "$1" | cut -d_ -f4)
  ls .kb/level1/"${p}"_*.py | head -1
}
echo "${#candidates[@]} candidates; builds first"
for f in "${candidates[@]}"; do
  ANVIL_ASSUME_NO_GPU=1 timeout 600 "$A" eval --backend cuda --cache-dir "$CACHE" -q -t "$(task_of "$f")" -c "$f" \
    > /dev/null 2>&1 &
  while [ "$(jobs -r | wc -l)" -ge "$(nproc)" ]; do sleep 0.2; done
done
wait
echo "builds done at $(( $(date +%s) - start )) s"
for f in "${candidates[@]}"; do
  name=$(basename "$f" .py)
  if [ -f ".gpu-done/fs_$name.json" ]; then cp ".gpu-done/fs_$name.json" ".gpu-done/v_$name.json" "$OUT/" 2>/dev/null; continue; fi
  elapsed=$(( $(date +%s) - start ))
  if [ "$elapsed" -gt "${LIMIT:-420}" ]; then echo "out of time before $name"; break; fi
  left=$(( 570 - elapsed )); [ "$left" -gt 300 ] && left=300
  timeout "$left" python3 bench/scripts/fs_watch.py --path "$CACHE" --json "$OUT/fs_$name.json" -- \
    "$A" eval --backend cuda --cache-dir "$CACHE" --json -q -t "$(task_of "$f")" -c "$f" --trials 3 --iters 10 \
    --baselines eager > "$OUT/v_$name.json" 2> "$OUT/err_$name.txt"
done
python3 - "$OUT" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
print("| candidate | verdict | s | growth MiB per filesystem | within 64 MiB |")
print("|---|---|---|---|---|")
for fs_file in sorted(glob.glob(f"{out}/fs_*.json")):
    name = os.path.basename(fs_file)[3:-5]
    fs = json.load(open(fs_file))
    try:
        status = json.load(open(f"{out}/v_{name}.json"))["status"]
    except (OSError, ValueError, KeyError):
        status = "?"
    growth = {f["path"]: f["growth_bytes"] / 2**20 for f in fs["filesystems"]}
    ok = all(g <= 64 for g in growth.values())
    print(f"| {name} | {status} | {fs['seconds']:.1f} | "
          + ", ".join(f"{p}: {g:.1f}" for p, g in growth.items()) + f" | {'yes' if ok else 'NO'} |")
PY
tar -C "$OUT" -czf "$OUT/fs_target.tar.gz" $(cd "$OUT" && ls fs_*.json v_*.json err_*.txt 2>/dev/null) \
  && (cd "$OUT" && rm -f fs_*.json v_*.json err_*.txt)
