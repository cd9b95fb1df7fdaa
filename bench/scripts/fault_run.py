"""2,000 scripted samples with injected server faults (issue 32's target): every sample ends with exactly one outcome,
and the table counts each once. CPU backend.

Four tasks (the bundled ReLU under four names, each its own problem) x 500 samples; the scripted server answers
five kinds in turn (a passing native kernel, a wrong one, one that does not build, an answer with no code, a
refusal), so at most 4 x 3 = 12 distinct candidates are judged and the verdict cache answers the rest; 5 % of its
answers are replaced by a 500, a body that is not JSON or a dropped connection (tests/support/openai_server.py).
The run is checked after it ends, then run again (faults still on) until nothing is left to redo.

    python3 bench/scripts/fault_run.py [--samples 500] [--rate 0.05] [--out RESULT.md]
"""

import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

from anvil_runs import open_run  # noqa: E402

RELU = ROOT / "examples" / "candidates" / "relu"


def fenced(path, lang):
    return f"Here it is.\n\n```{lang}\n{path.read_text()}```\n"


def check(db, tasks, samples):
    """Problems found in the run database: each sample one attempt (one turn), each attempt one outcome."""
    wrong = []
    with open_run(db) as run:
        attempts = run.attempts()
        by_sample = collections.Counter((a["task_name"], a["sample"]) for a in attempts)
        if len(by_sample) != tasks * samples:
            wrong.append(f"{len(by_sample)} samples on record, expected {tasks * samples}")
        wrong += [f"{k}: {n} attempts" for k, n in by_sample.items() if n != 1][:10]
        wrong += [f"{a['task_name']} sample {a['sample']}: state {a['state']}" for a in attempts
                  if a["state"] != "done"][:10]
        outcomes = collections.Counter(a["outcome"] for a in attempts if a["state"] == "done")
    return wrong, outcomes


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--anvil", default=str(ROOT / "build" / "anvil"))
    parser.add_argument("--samples", type=int, default=500, help="per task (4 tasks)")
    parser.add_argument("--rate", type=float, default=0.05)
    parser.add_argument("--work")
    parser.add_argument("--out")
    args = parser.parse_args()
    work = Path(args.work or tempfile.mkdtemp(prefix="anvil-fault-run-"))
    tasks_dir = work / "tasks" / "level1"
    tasks_dir.mkdir(parents=True, exist_ok=True)
    for i, name in enumerate(("1_ReLU", "2_ReLU", "3_ReLU", "4_ReLU")):
        text = (ROOT / "examples" / "tasks" / "relu.py").read_text()
        (tasks_dir / f"{name}.py").write_text(f"# fault run: problem {i + 1}\n{text}")
    answers = [{"content": fenced(RELU / "pass_native.cpp", "cpp")},
               {"content": fenced(RELU / "wrong_answer_native.cpp", "cpp")},
               {"content": fenced(RELU / "compile_error_native.cpp", "cpp")},
               {"content": "I would write a vectorized loop."},
               {"refusal": "I cannot help with that."}]
    # One rule per kind, taken in turn by request order: a cycle of the five kinds.
    script = {"rules": [{"answers": answers * (4 * args.samples // len(answers) + 1)}],
              "faults": {"rate": args.rate, "seed": 7}}
    (work / "script.json").write_text(json.dumps(script))
    server = subprocess.Popen([sys.executable, str(ROOT / "tests" / "support" / "openai_server.py"), "--script",
                               str(work / "script.json"), "--log", str(work / "requests.jsonl")],
                              stdout=subprocess.PIPE, text=True)
    env = {k: v for k, v in os.environ.items() if "KEY" not in k}
    db = work / "run.db"
    rounds = []
    try:
        url = server.stdout.readline().split()[-1]
        cmd = [args.anvil, "generate", "--endpoint", url, "--model", "scripted", "--tasks", str(work / "tasks"),
               "--out", str(db), "--samples", str(args.samples), "--format", "native", "--no-perf", "--trials", "2",
               "--cache-dir", str(work / "cache"), "-j", "2", "-q"]
        print(" ".join(cmd), flush=True)
        for attempt in range(5):
            started = time.monotonic()
            proc = subprocess.run(cmd, env=env, text=True, capture_output=True)
            seconds = time.monotonic() - started
            wrong, outcomes = check(db, 4, args.samples)
            rounds.append((proc.returncode, seconds, dict(sorted(outcomes.items())), wrong, proc.stdout))
            print(f"run {attempt + 1}: exit {proc.returncode} in {seconds:.1f} s, {dict(outcomes)}, "
                  f"{len(wrong)} problems", flush=True)
            if proc.returncode == 0 and not outcomes.get("server_error") and not outcomes.get("infra_error"):
                break
    finally:
        server.kill()
        server.wait()
    requests = sum(1 for _ in open(work / "requests.jsonl"))
    table = subprocess.run([args.anvil, "kernelbench", "--run", str(db)], text=True, capture_output=True).stdout
    lines = [f"# {4 * args.samples} scripted samples with {args.rate:.0%} injected server faults", "",
             f"Command: `python3 bench/scripts/fault_run.py --samples {args.samples} --rate {args.rate}`", "",
             f"HTTP requests the server saw: {requests} (retries included)", ""]
    for i, (rc, seconds, outcomes, wrong, stdout) in enumerate(rounds):
        this_time = next((line for line in stdout.splitlines() if line.startswith("this time:")), "")
        lines.append(f"- run {i + 1}: exit {rc}, {seconds:.1f} s; outcomes {outcomes}; "
                     f"{sum(outcomes.values())} samples with one outcome; problems: {wrong or 'none'}; {this_time}")
    lines += ["", "The last run's summary:", "", "```", rounds[-1][4].rstrip(), "```", "",
              "The table (`anvil kernelbench --run`):", "", "```", table.rstrip(), "```", ""]
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    sys.exit(0 if not rounds[-1][3] else 1)


if __name__ == "__main__":
    main()
