"""Does the model loop cost verdicts? `anvil generate` against a server that answers at once, against `anvil eval` on
the same candidates (issue 32's target: generate gives >= 90 % of eval's verdicts/hour), CPU backend.

The candidates are the red-team sweep's honest kernels for KernelBench problems at small sizes
(bench/scripts/shrink_kernelbench.py), one per problem. Each run starts from an empty cache folder (so both prepare
every task and compile every candidate), with the verdict cache off and the same -j; only the precompiled torch
header, which a machine builds once, is shared (ANVIL_PCH_CACHE, built by a warm-up before the timed runs). The two
commands alternate, `--runs` times each, and the medians are compared.

    python3 bench/scripts/generate_vs_eval.py [--problems 12] [--runs 3] [-j 2] [--out RESULT.md]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from model_loop_acceptance import SHRINK, fenced, honest_kernels  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--anvil", default=str(ROOT / "build" / "anvil"))
    parser.add_argument("--kernelbench", default=str(ROOT.parent / "shared" / "kernelbench"))
    parser.add_argument("--problems", type=int, default=12)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--work")
    parser.add_argument("--out")
    args = parser.parse_args()
    work = Path(args.work or tempfile.mkdtemp(prefix="anvil-gen-vs-eval-"))
    tasks_dir = work / "kernelbench"
    subprocess.run([sys.executable, str(SHRINK), "make", str(tasks_dir), "--kernelbench", args.kernelbench],
                   check=True, stdout=subprocess.DEVNULL)
    honest = honest_kernels()
    chosen = sorted(p for p in honest if (tasks_dir / p).is_file())[:args.problems]
    for p in tasks_dir.glob("level*/*.py"):
        if str(p.relative_to(tasks_dir)) not in chosen:
            p.unlink()
    jobs, rules = [], []
    for rel in chosen:
        marker = f"# KernelBench {rel} at small sizes"
        task = tasks_dir / rel
        task.write_text(marker + "\n" + task.read_text())
        cand = work / "candidates" / (Path(rel).stem + honest[rel].suffix)
        cand.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(honest[rel], cand)
        jobs.append({"task": str(task), "candidate": str(cand)})
        lang = "cpp" if cand.suffix == ".cpp" else "python"
        rules.append({"context": marker, "answers": [{"content": fenced(cand.read_text(), lang)}]})
    (work / "jobs.jsonl").write_text("".join(json.dumps(j) + "\n" for j in jobs))
    (work / "script.json").write_text(json.dumps({"rules": rules}))
    server = subprocess.Popen([sys.executable, str(ROOT / "tests" / "support" / "openai_server.py"), "--script",
                               str(work / "script.json")], stdout=subprocess.PIPE, text=True)
    env = {k: v for k, v in os.environ.items() if "KEY" not in k}
    env["ANVIL_PCH_CACHE"] = str(work / "pch")
    warm = subprocess.run([args.anvil, "eval", "--task", jobs[0]["task"], "--candidate", jobs[0]["candidate"],
                           "--cache-dir", str(work / "cache-warm-up"), "--no-perf", "--trials", "1", "-q"],
                          env=env, text=True, capture_output=True)
    print(f"warm-up (the torch header): exit {warm.returncode}", flush=True)
    shutil.rmtree(work / "cache-warm-up", ignore_errors=True)
    times = {"eval": [], "generate": []}
    statuses = {}
    try:
        url = server.stdout.readline().split()[-1]
        for run in range(args.runs):
            for kind in ("eval", "generate"):
                cache = work / f"cache-{kind}-{run}"
                shutil.rmtree(cache, ignore_errors=True)
                if kind == "eval":
                    cmd = [args.anvil, "eval", "--list", str(work / "jobs.jsonl"), "-j", str(args.jobs),
                           "--cache-dir", str(cache), "--json", "-q"]
                else:
                    db = work / f"run-{run}.db"
                    cmd = [args.anvil, "generate", "--endpoint", url, "--model", "scripted", "--tasks", str(tasks_dir),
                           "--out", str(db), "--no-verdict-cache", "-j", str(args.jobs), "--cache-dir", str(cache),
                           "-q"]
                started = time.monotonic()
                proc = subprocess.run(cmd, env=env, text=True, capture_output=True)
                seconds = time.monotonic() - started
                if proc.returncode not in (0, 1) or (kind == "generate" and proc.returncode != 0):
                    sys.exit(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr[-3000:]}")
                if kind == "eval":
                    got = [json.loads(line)["status"] for line in proc.stdout.splitlines() if line.strip()]
                else:
                    sys.path.insert(0, str(ROOT / "python"))
                    from anvil_runs import open_run
                    with open_run(db) as r:
                        got = [a["outcome"] for a in r.attempts()]
                statuses[f"{kind} {run}"] = {s: got.count(s) for s in sorted(set(got))}
                times[kind].append(seconds)
                print(f"run {run + 1} {kind}: {seconds:.1f} s, {len(got)} verdicts {statuses[f'{kind} {run}']}",
                      flush=True)
                shutil.rmtree(cache, ignore_errors=True)
    finally:
        server.kill()
        server.wait()
    n = len(chosen)
    rate = {k: 3600 * n / statistics.median(v) for k, v in times.items()}
    ratio = rate["generate"] / rate["eval"]
    lines = [f"# anvil generate against anvil eval, same candidates, CPU backend", "",
             f"Command: `python3 bench/scripts/generate_vs_eval.py --problems {args.problems} --runs {args.runs} "
             f"-j {args.jobs}`", "",
             f"{n} honest kernels (the red-team sweep's, one per KernelBench problem at small sizes), each run from an "
             f"empty cache folder but for the torch header (built once before), verdict cache off, -j {args.jobs}; "
             f"the server answers at once.", "",
             "| command | runs (s) | median (s) | verdicts/hour |", "|---|---|---|---|"]
    for k in ("eval", "generate"):
        lines.append(f"| anvil {k} | {', '.join(f'{t:.1f}' for t in times[k])} | "
                     f"{statistics.median(times[k]):.1f} | {rate[k]:.0f} |")
    lines += ["", f"generate / eval = {ratio:.3f} (target >= 0.9)", "",
              "Statuses per run: " + "; ".join(f"{k}: {v}" for k, v in statuses.items()), ""]
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text)


if __name__ == "__main__":
    main()
