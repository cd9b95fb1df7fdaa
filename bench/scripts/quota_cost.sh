#!/bin/bash
# What the quotas cost (issue 35): the bundled examples (`anvil eval` with no task) judged without quotas
# (--quota-memory none --quota-pids 0 --quota-cpu none) and with the defaults, alternating, twice each; then the verdicts compared.
#   bash bench/scripts/quota_cost.sh [OUT_DIR]
set -eu
cd "$(dirname "$0")/../.."
out=${1:-$(mktemp -d)}
mkdir -p "$out"
for i in 1 2; do
  for mode in none quotas; do
    flags=()
    [ "$mode" = none ] && flags=(--quota-memory none --quota-pids 0 --quota-cpu none)
    start=$(date +%s.%N)
    build/anvil eval -q --json "${flags[@]}" > "$out/$mode$i.jsonl" 2> "$out/$mode$i.err"
    echo "$mode $i: $(python3 -c "print(round($(date +%s.%N) - $start, 1))") s"
  done
done
python3 - "$out" <<'PY'
import json, sys
from pathlib import Path
runs = {}
for f in sorted(Path(sys.argv[1]).glob("*.jsonl")):
    runs[f.stem] = {json.loads(l)["candidate"]["path"]: json.loads(l) for l in f.read_text().splitlines() if l.strip()}
names = sorted(next(iter(runs.values())))
differ = [n for n in names if len({r[n]["status"] for r in runs.values()}) > 1]
print(f"{len(names)} candidates; verdicts that differ between runs: {len(differ)} {differ}")
for name, r in runs.items():
    ran = sum("cgroup" in v["gates"]["run"].get("sandbox", []) for v in r.values())
    print(f"{name}: verdict seconds summed {sum(v['seconds'] for v in r.values()):.1f}; runs in their cgroups {ran}")
PY
