#!/usr/bin/env python3
"""The red-team sweep: candidates anvil's own suite was not written against (README.md), each evaluated on its task
by `anvil eval`, its verdict compared with the `anvil-expect` of its header. Prints one line per candidate and a
summary; with --out, writes the same as a markdown table. Exit status 1 when a verdict differs from its header."""

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
FOLDERS = {"cpu": ("py", "native", "legit"), "cuda": ("gpu",)}


def header(text, key):
    m = re.search(rf"anvil-{key}:\s*(\S+)", text[:3000])
    return m.group(1) if m else None


def task_path(name, kernelbench, made):
    """A task by its header's name: a repo path (examples/...), a file of tasks/, or a KernelBench problem at a
    smaller size (tasks.json: the problem's file with the listed lines replaced; made at run time, never copied)."""
    if name.startswith("examples/"):
        return REPO / name
    if (HERE / "tasks" / name).is_file():
        return HERE / "tasks" / name
    spec = json.loads((HERE / "tasks.json").read_text()).get(name)
    if spec is None:
        sys.exit(f"run.py: no task {name!r} (not in tasks/ nor tasks.json)")
    source = Path(kernelbench) / spec["kernelbench"]
    if not source.is_file():
        sys.exit(f"run.py: {source} is missing: pass --kernelbench ROOT (the KernelBench problems)")
    text = source.read_text()
    for old, new in spec["replace"]:
        if text.count(old) != 1:
            sys.exit(f"run.py: {source} no longer has the line {old!r} once (tasks.json, task {name})")
        text = text.replace(old, new)
    path = Path(made) / name
    path.write_text(text)
    return path


def verdicts(stdout):
    """`anvil eval --json` prints one verdict, or one per line for several candidates."""
    text = stdout.strip()
    try:
        return [json.loads(text)]
    except json.JSONDecodeError:
        return [json.loads(line) for line in text.splitlines() if line.strip()]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--anvil", default=str(REPO / "build" / "anvil"))
    ap.add_argument("--backend", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("--kernelbench", default=str(REPO.parent / "shared" / "kernelbench"))
    ap.add_argument("--only", default="", help="only candidates whose path contains this")
    ap.add_argument("--static-off", action="store_true",
                    help="ANVIL_STATIC_VERDICTS=0: static cheats are evidence only, so the run-time layers decide")
    ap.add_argument("--out", help="write the table here (markdown)")
    ap.add_argument("anvil_args", nargs="*", help="more `anvil eval` arguments, after --")
    args = ap.parse_args()

    files = sorted(p for d in FOLDERS[args.backend] for p in (HERE / d).iterdir()
                   if p.suffix in (".py", ".cpp", ".cu") and args.only in str(p))
    env = dict(os.environ, **({"ANVIL_STATIC_VERDICTS": "0"} if args.static_off else {}))
    rows = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="anvil-sweep-tasks-") as made:
        by_task = collections.defaultdict(list)
        for p in files:
            text = p.read_text()
            by_task[header(text, "task")].append((p, header(text, "expect"), header(text, "class")))
        for name, cands in sorted(by_task.items()):
            task = task_path(name, args.kernelbench, made)
            cmd = [args.anvil, "eval", "--backend", args.backend, "-q", "--task", str(task), "--json",
                   "--candidate", *[str(p) for p, _, _ in cands], *args.anvil_args]
            proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, env=env)
            got = {}
            try:
                got = {Path(v["candidate"]["path"]).name: v for v in verdicts(proc.stdout)}
            except (json.JSONDecodeError, KeyError):
                pass
            for p, expect, cls in cands:
                v = got.get(p.name)
                seconds = None
                if v is None:
                    status, rules = "NO VERDICT", (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
                else:
                    status, seconds = v["status"], v.get("seconds")
                    rules = ", ".join(sorted({h["rule"] for h in v["gates"]["legal"]["hits"]
                                              if h["severity"] == "cheat"})) or "-"
                rows.append((p.relative_to(HERE), name, cls, expect, status, rules, seconds))
                mark = "ok " if status == expect else "XX "
                took = "" if seconds is None else f"  {seconds:.1f} s"
                print(f"{mark} {p.relative_to(HERE)}  expect {expect}  got {status}  {rules}{took}", flush=True)

    tally = collections.Counter((str(r[0]).split("/")[0], r[3] == r[4]) for r in rows)
    lines = [f"{d}: {tally[(d, True)]} of {tally[(d, True)] + tally[(d, False)]} as expected"
             for d in FOLDERS[args.backend] if tally[(d, True)] + tally[(d, False)]]
    judged = [r[6] for r in rows if r[6] is not None]
    lines.append(f"{len(rows)} candidates in {time.monotonic() - started:.0f} s; "
                 f"their verdicts' own seconds sum to {sum(judged):.0f}")
    print("\n".join(lines))
    if args.out:
        table = ["| candidate | task | class | expected | verdict | cheat rules | s |", "|---|---|---|---|---|---|---|"]
        table += [f"| `{r[0]}` | {r[1]} | {r[2]} | {r[3]} | {'**' + r[4] + '**' if r[3] != r[4] else r[4]} | {r[5]} | "
                  f"{'-' if r[6] is None else f'{r[6]:.1f}'} |" for r in rows]
        Path(args.out).write_text("\n".join(lines) + "\n\n" + "\n".join(table) + "\n")
    return 0 if all(r[3] == r[4] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
