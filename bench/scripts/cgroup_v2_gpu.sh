#!/bin/bash
# cgroup v2 delegation on the GPU machine (issue 35; a device call). anvil runs there in a cgroup v2 group whose
# memory and pids controllers are available but not handed down: anvil moves its group's processes into
# <group>/anvil-leaf and enables them below (src/core/cgroup.cc, DelegateV2). This shows the group before and after,
# a second anvil finding the leaf, the quota red-team cases (tests/redteam/quota, on the cpu backend, 256 MiB and 64
# processes as tests/cli/test_quotas.py), then the eight CUDA candidates of quota_gpu.sh with the default quotas.
# Carried (gitignored): .carry/ (the CPU machine's build, stripped, its libanvil_*.so, .carry/lib: the shared
# libraries it needs beyond glibc and libstdc++) and .kb/ (level1/1, 1/40, 2/12, 2/63, 3/1 of KernelBench).
#   run(command="bash bench/scripts/cgroup_v2_gpu.sh", carry=[".carry", ".kb"])
#   run(command="PIDS=0 SKIP_CUDA=1 bash bench/scripts/cgroup_v2_gpu.sh", carry=[".carry", ".kb"])
set -u
cd "$(dirname "$0")/../.."
export ANVIL_SOURCE_DIR=$PWD PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1
OUT=${OUT:-$PWD/bench-out}
mkdir -p "$OUT"
if ldd .carry/anvil | grep -q "not found"; then export LD_LIBRARY_PATH=$PWD/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; fi
.carry/anvil --version || exit 1
group() { echo "/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)"; }
own=$(group)
echo "== before: $own"
echo "controllers: $(cat "$own/cgroup.controllers")"
echo "subtree_control: $(cat "$own/cgroup.subtree_control")"
echo "processes: $(wc -l < "$own/cgroup.procs"); memory.max $(cat "$own/memory.max" 2>/dev/null); pids.max $(cat "$own/pids.max" 2>/dev/null)"
echo "== sandbox-check"
.carry/anvil sandbox-check --backend cuda 2>&1 | grep -i "quotas"
echo "== after: this shell is in $(group)"
echo "subtree_control: $(cat "$own/cgroup.subtree_control"); children: $(cd "$own" && ls -d */ 2>/dev/null | tr '\n' ' ')"
echo "== a second anvil"
.carry/anvil sandbox-check --backend cpu 2>&1 | grep -i "quotas"
PIDS=${PIDS:-64}  # 0 where the pids controller is not available (the H100 machine's group has memory alone)
echo "== the quota red-team cases (cpu backend, 256 MiB, $PIDS processes)"
summary() {
  python3 -c '
import json, sys
text = sys.stdin.read()
if not text.strip():
    print(sys.argv[1], "no verdict")
for v in ([json.loads(text)] if text.strip() else []):
    run, comp = v["gates"]["run"], v["gates"].get("compile") or {}
    print(sys.argv[1], v["status"], run.get("stage"), "cgroup" in (run.get("sandbox") or []), v.get("quotas"),
          ((run.get("message") or "") or (comp.get("summary") or ""))[:110].replace("\n", " "))
' "$1"
}
for c in examples/candidates/relu/pass_native.cpp tests/redteam/quota/malloc_bomb_native.cpp \
         tests/redteam/quota/thread_bomb_native.cpp tests/redteam/quota/compiler_bomb_native.cpp \
         tests/redteam/quota/import_bomb_kb.py tests/redteam/quota/descriptor_bomb_native.cpp \
         tests/redteam/quota/scratch_filler_native.cpp; do
  ANVIL_STATIC_VERDICTS=0 timeout 120 .carry/anvil eval -t examples/tasks/relu.py -c "$c" -b cpu --timeout 30 --no-perf \
    --quota-memory 256M --quota-pids "$PIDS" --json -q 2> "$OUT/$(basename "$c").err" | summary "$(basename "$c")"
done
[ -n "${SKIP_CUDA:-}" ] && exit 0
echo "== the eight CUDA candidates, default quotas"
MODE=quotas LIMIT=${LIMIT:-300} bash bench/scripts/quota_gpu.sh 2>&1 | tail -12
