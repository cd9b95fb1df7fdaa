"""Issue 38's first target from verdicts: per problem, wall time beyond extraction, build and the torch.compile
baseline's own compile (reported apart, with the run's one-time `setup`) against the device's work the verdict ran (`work_seconds`, docs/verdict.md):
within when beyond <= work + max(3 s, 0.5 x work). In a batch a verdict's `seconds` also hold its waits for a
compile slot, for the device while others held it and for the task server while it ran another problem's task
code, torch.compile's compile among it (`compile_wait_seconds`, `device_wait_seconds`, `server_wait_seconds`: other
problems' time, not this one's); they are reported apart too. Prints a markdown summary, the 10 worst problems and
where their time went (the stages, and the baselines' phases: `baseline_phase_seconds`), and the problems whose
torch.compile baseline compiled no graph (`gates.perf.compile_graphs`).

    python3 bench/scripts/work_table.py all_own.jsonl all_reference.jsonl [--worst 10] [--against OLD.jsonl ...]

With --against (an earlier run's verdicts), each file's problems that the earlier run judged too are compared:
problems within, median beyond and the largest stages summed, then and now.

A problem with several candidates counts by its worst verdict. Verdicts without work_seconds (made before it
existed) and infra_error verdicts are listed apart.
"""

import argparse
import json
import statistics
import sys


def row(v):
    stages = v.get("stage_seconds") or {}
    # Reported apart: the candidate's extraction and build, torch.compile's own compile, and `setup` (torch's build
    # facts, the sandbox probe and the workers' zygote, once per run: the first verdicts of a batch wait together).
    apart = (stages.get("extract", 0) + stages.get("compile", 0) + v.get("baseline_compile_seconds", 0)
             + stages.get("setup", 0))
    work = sum((v.get("work_seconds") or {}).values())
    # The queues: a compile slot, the device, and the task server while it ran another verdict's task code.
    queue = v.get("compile_wait_seconds", 0) + v.get("device_wait_seconds", 0) + v.get("server_wait_seconds", 0)
    beyond = v["seconds"] - apart - queue
    bound = work + max(3.0, 0.5 * work)
    return {"problem": f"L{v['task'].get('level', 0)}/{v['task']['name']}", "status": v["status"],
            "seconds": v["seconds"], "apart": apart, "work": work, "beyond": beyond, "bound": bound,
            "excess": beyond - bound, "parts": v.get("work_seconds") or {}, "stages": stages,
            "queue": queue, "retries": v.get("infra_retries", 0),
            "baseline_phases": v.get("baseline_phase_seconds") or {},
            "compile_graphs": ((v.get("gates") or {}).get("perf") or {}).get("compile_graphs")}


def read_rows(paths, skipped):
    """{problem: its worst verdict's row} of the verdicts in `paths`; what cannot count goes to `skipped`."""
    rows = {}
    for path in paths:
        with open(path) as f:
            for line in f:
                if not line.strip():
                    continue
                v = json.loads(line)
                name = v.get("candidate", {}).get("path", "?").rsplit("/", 1)[-1]
                if v.get("status") == "infra_error" or "work_seconds" not in v:
                    skipped.append(f"{name}: {v.get('status')}")
                    continue
                r = row(v)
                if r["problem"] not in rows or r["excess"] > rows[r["problem"]]["excess"]:
                    rows[r["problem"]] = r
    return rows


def compare(paths, before):
    """Each of `paths`' problems that `before` (rows of an earlier run) has too: then and now, as markdown."""
    print("\n| file | problems in both | within then -> now | median beyond then -> now | stages summed then -> now |")
    print("|---|---|---|---|---|")
    for path in paths:
        now = read_rows([path], [])
        both = sorted(set(now) & set(before))
        if not both:
            continue
        stages = {}
        for rows, side in ((before, 0), (now, 1)):
            for p in both:
                for k, s in rows[p]["stages"].items():
                    stages.setdefault(k, [0.0, 0.0])[side] += s
        top = sorted(stages.items(), key=lambda kv: -max(kv[1]))[:6]
        within = [sum(rows[p]["excess"] <= 0 for p in both) for rows in (before, now)]
        beyond = [statistics.median(rows[p]["beyond"] for p in both) for rows in (before, now)]
        print(f"| {path.rsplit('/', 1)[-1]} | {len(both)} | {within[0]} -> {within[1]} | "
              f"{beyond[0]:.2f} s -> {beyond[1]:.2f} s | "
              + ", ".join(f"{k} {a:.0f} -> {b:.0f} s" for k, (a, b) in top) + " |")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("verdicts", nargs="+")
    parser.add_argument("--worst", type=int, default=10)
    parser.add_argument("--against", nargs="+", default=[], help="an earlier run's verdicts, to compare with")
    args = parser.parse_args(argv)
    skipped = []
    rows = read_rows(args.verdicts, skipped)
    if not rows:
        sys.exit("work_table: no verdict with work_seconds")
    within = [r for r in rows.values() if r["excess"] <= 0]
    print(f"{len(within)} of {len(rows)} problems within: wall beyond (setup, extract, compile, the compile "
          f"baseline's compile, and the batch's queues) <= work + max(3 s, 0.5 x work); {len(skipped)} verdicts left out "
          "(infra_error or no work_seconds).\n")
    print("| problem | verdict | s | apart s | queued s | beyond s | work s | bound s | excess s | infra retries | "
          "largest stages | baselines' largest phases |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in sorted(rows.values(), key=lambda r: -r["excess"])[:args.worst]:
        top = sorted(r["stages"].items(), key=lambda kv: -kv[1])[:3]
        phases = sorted(r["baseline_phases"].items(), key=lambda kv: -kv[1])[:3]
        print(f"| {r['problem'][:48]} | {r['status']} | {r['seconds']:.1f} | {r['apart']:.1f} | {r['queue']:.1f} | "
              f"{r['beyond']:.1f} | {r['work']:.2f} | {r['bound']:.1f} | {r['excess']:.1f} | {r['retries']} | "
              + ", ".join(f"{k} {s:.1f}" for k, s in top) + " | "
              + (", ".join(f"{k} {s:.2f}" for k, s in phases) or "-") + " |")
    eager = sorted(r["problem"] for r in rows.values() if r["compile_graphs"] == 0)
    said = sum(1 for r in rows.values() if r["compile_graphs"] is not None)
    print(f"\ntorch.compile baselines that compiled no graph (run eagerly), of the {said} problems whose verdict says: "
          f"{len(eager)}" + (": " + ", ".join(eager[:30]) + (" ..." if len(eager) > 30 else "") if eager else ""))
    if skipped:
        print("\nLeft out: " + "; ".join(skipped[:20]) + (" ..." if len(skipped) > 20 else ""))
    if args.against:
        compare(args.verdicts, read_rows(args.against, []))


if __name__ == "__main__":
    main()
