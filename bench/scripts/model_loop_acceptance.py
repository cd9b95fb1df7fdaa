"""The model loop's acceptance run (issue 32): `anvil generate --turns 3` on the CPU backend over KernelBench problems
at small sizes (bench/scripts/shrink_kernelbench.py, made at run time from ../shared/kernelbench), against the
scripted OpenAI-protocol server of the tests (tests/support/openai_server.py).

Every problem gets two samples. Where the red-team sweep has an honest kernel for the problem (tests/redteam/sweep/
legit/), one sample answers it on turn 1 and the other answers a kernel that does not build, then the honest one when
the feedback comes (turn 2). Every other problem is scripted through the other outcomes, a different pair per
problem and turn: wrong answers, kernels that throw, hang or do not build, PyTorch instead of a kernel, answers with
no code, cut off, refused (bench/model_loop/ holds the generic candidates). The script checks that each problem's
outcomes per turn are the scripted ones, and prints the per-turn table (`anvil kernelbench --run RUN.db`).

    python3 bench/scripts/model_loop_acceptance.py [--problems 60] [--work DIR] [--out RESULT.md] [-- anvil args]

It takes 30-60 minutes on the two-core CPU machine (not CI).

With --gpu (a GPU machine): the problems of the project's own CUDA candidates (tests/gpu/kernelbench_run) at their
real sizes, on the cuda backend; one sample answers a candidate of the problem that fails (its own failing one, or a
kernel that does not build) on turn 1 and its passing one on turn 2, the other the passing one on turn 1.
`--only 1/1,1/40,...` picks problems by level/number.
"""

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

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "tests" / "support"))

from anvil_runs import open_run  # noqa: E402

SHRINK = ROOT / "bench" / "scripts" / "shrink_kernelbench.py"
SWEEP = ROOT / "tests" / "redteam" / "sweep"
GENERIC = ROOT / "bench" / "model_loop"
# Honest kernels the sweep's README lists as judged otherwise on purpose (docs/rules.md).
NOT_PASS = ("kb_fire_module_fpad", "kb_fire_module_torch_cat", "kb_hinge_std_thread_join",
            "kb_gelu_build_dir_next_to_file")

# The scripted outcomes of problems without an honest kernel: (answer, outcome) pairs, cycled over problems and turns.
OTHER = [("wrong_answer", "wrong_answer"), ("no_code", "no_code"), ("compile_error", "compile_error"),
         ("runtime_error", "runtime_error"), ("refused", "refused"), ("truncated", "truncated"),
         ("cheat", "cheat"), ("wrong_answer", "wrong_answer"), ("no_code", "no_code"), ("timeout", "timeout")]


def fenced(text, lang="python"):
    return f"Here is the kernel.\n\n```{lang}\n{text}```\n"


def answer(kind):
    if kind == "no_code":
        return {"content": "I would tile the loops and vectorize the inner one."}
    if kind == "refused":
        return {"refusal": "I cannot help with that."}
    if kind == "truncated":
        return {"content": "```python\nimport torch\nclass ModelNew(torch.nn.Module):\n", "finish_reason": "length"}
    return {"content": fenced((GENERIC / f"{kind}.py").read_text())}


def honest_kernels():
    """KernelBench path -> an honest candidate's file (the sweep's legit/ kernels written for its sizes)."""
    tasks = json.loads((SWEEP / "tasks.json").read_text())
    # The variant of each problem whose sizes shrink_kernelbench.py uses: the first by name that changes no dtype
    # (a variant may change more than sizes, e.g. return indices too: its kernels are not this problem's).
    variant = {}
    for name, spec in sorted(tasks.items()):
        if not any("dtype" in new for _, new in spec["replace"]):
            variant.setdefault(spec["kernelbench"], name)
    found = {}
    for f in sorted((SWEEP / "legit").glob("*.py")):
        text = f.read_text()
        task = re.search(r"anvil-task:\s*(\S+)", text)
        expect = re.search(r"anvil-expect:\s*(\S+)", text)
        if not task or not expect or expect.group(1) != "pass" or f.stem in NOT_PASS:
            continue
        spec = tasks.get(task.group(1))
        if spec is None or variant.get(spec["kernelbench"]) != task.group(1):
            continue  # A task of tasks/, or another variant: not the problem at its shrunk size.
        found.setdefault(spec["kernelbench"], f)
    return found


GPU_CANDIDATES = ROOT / "tests" / "gpu" / "kernelbench_run"


def gpu_problems(kernelbench, tasks_dir, only):
    """(rel -> honest file, rel -> (broken file, its outcome)) for the problems of tests/gpu/kernelbench_run, their
    task files copied from `kernelbench` at their real sizes."""
    by_problem = {}
    for f in sorted(GPU_CANDIDATES.glob("level_*_problem_*_sample_*_kernel.*")):
        m = re.match(r"level_(\d+)_problem_(\d+)_sample_(\d+)_kernel", f.name)
        expect = re.search(r"anvil-expect:\s*(\S+)", f.read_text())
        by_problem.setdefault((int(m.group(1)), int(m.group(2))), []).append((f, expect.group(1) if expect else ""))
    honest, broken = {}, {}
    for (level, number), files in sorted(by_problem.items()):
        if only and f"{level}/{number}" not in only:
            continue
        matches = sorted(Path(kernelbench, f"level{level}").glob(f"{number}_*.py"))
        source = matches[0] if matches else None
        good = [f for f, e in files if e == "pass"]
        if source is None or not good:
            continue
        rel = f"level{level}/{source.name}"
        (tasks_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        (tasks_dir / rel).write_text(source.read_text())
        honest[rel] = good[0]
        bad = [(f, e) for f, e in files if e not in ("pass", "timeout", "")]
        broken[rel] = bad[0] if bad else (GENERIC / "compile_error.py", "compile_error")
    return honest, broken


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--anvil", default=str(ROOT / "build" / "anvil"))
    parser.add_argument("--kernelbench", default=str(ROOT.parent / "shared" / "kernelbench"))
    parser.add_argument("--problems", type=int, default=60, help="how many problems (honest-kernel ones first)")
    parser.add_argument("--work", help="folder for the tasks, the run database and the server's log (default: temp)")
    parser.add_argument("--out", help="write the result here (markdown)")
    parser.add_argument("--gpu", action="store_true", help="the GPU candidates' problems at real sizes, cuda backend")
    parser.add_argument("--only", default="", help="with --gpu: problems as level/number, e.g. 1/1,2/12")
    parser.add_argument("anvil_args", nargs="*", help="more `anvil generate` arguments, after --")
    args = parser.parse_args()
    work = Path(args.work or tempfile.mkdtemp(prefix="anvil-loop-acceptance-"))
    tasks_dir = work / "kernelbench"
    broken = {}
    if args.gpu:
        honest, broken = gpu_problems(args.kernelbench, tasks_dir, set(filter(None, args.only.split(","))))
    else:
        subprocess.run([sys.executable, str(SHRINK), "make", str(tasks_dir), "--kernelbench", args.kernelbench],
                       check=True)
        honest = honest_kernels()
    every = sorted(str(p.relative_to(tasks_dir)) for p in tasks_dir.glob("level*/*.py"))
    chosen = [p for p in every if p in honest] + [p for p in every if p not in honest]
    chosen = chosen[:args.problems]
    for p in every:  # Only the chosen problems stay in the tree.
        if p not in chosen:
            (tasks_dir / p).unlink()
    # Each problem's rules: its own source in the prompt tells them apart (context), the turn by user messages.
    rules, expected = [], {}
    for i, rel in enumerate(chosen):
        marker = f"# KernelBench {rel} at small sizes"
        task = tasks_dir / rel
        task.write_text(marker + "\n" + task.read_text())
        if rel in honest:
            good = honest[rel]
            kernel = {"content": fenced(good.read_text(), "python" if good.suffix == ".py" else "cpp")}
            bad, bad_outcome = broken.get(rel, (GENERIC / "compile_error.py", "compile_error"))
            bad_answer = {"content": fenced(bad.read_text(), "python" if bad.suffix == ".py" else "cpp")}
            rules.append({"context": marker, "turn": 1, "answers": [bad_answer, kernel]})
            rules.append({"context": marker, "answers": [kernel]})
            expected[rel] = {1: sorted([bad_outcome, "pass"]), 2: ["pass"]}
        else:
            expected[rel] = {}
            for turn in (1, 2, 3):
                pair = [OTHER[(i + turn) % len(OTHER)], OTHER[(i + turn + 3) % len(OTHER)]]
                rules.append({"context": marker, "turn": turn, "answers": [answer(k) for k, _ in pair]})
                expected[rel][turn] = sorted(o for _, o in pair)
    script = work / "script.json"
    script.write_text(json.dumps({"rules": rules}))
    log = work / "requests.jsonl"
    server = subprocess.Popen([sys.executable, str(ROOT / "tests" / "support" / "openai_server.py"), "--script",
                               str(script), "--log", str(log)], stdout=subprocess.PIPE, text=True)
    try:
        url = server.stdout.readline().split()[-1]
        run_db = work / "run.db"
        env = {k: v for k, v in os.environ.items() if "KEY" not in k}
        command = [args.anvil, "generate", "--endpoint", url, "--model", "scripted", "--tasks", str(tasks_dir),
                   "--out", str(run_db), "--samples", "2", "--turns", "3", "--backend", "cuda" if args.gpu else "cpu",
                   *args.anvil_args]
        print(" ".join(command), flush=True)
        started = time.monotonic()
        gen = subprocess.run(command, env=env, text=True, capture_output=True)
        seconds = time.monotonic() - started
    finally:
        server.kill()
        server.wait()
    print(gen.stdout[-4000:], gen.stderr[-4000:], sep="\n")
    table = subprocess.run([args.anvil, "kernelbench", "--run", str(run_db)], text=True, capture_output=True).stdout
    got = collections.defaultdict(lambda: collections.defaultdict(list))
    with open_run(run_db) as run:
        by_path = {t["id"]: t for t in run.tasks()}
        for a in run.attempts():
            rel = str(Path(by_path[a["task_id"]]["path"]).relative_to(tasks_dir))
            got[rel][a["turn"]].append(a["outcome"] or a["state"])
    wrong = []
    for rel, turns in expected.items():
        have = {t: sorted(o) for t, o in got[rel].items()}
        want = {t: sorted(o) for t, o in turns.items()}
        if have != want:
            wrong.append(f"{rel}: expected {want}, got {have}")
    outcomes = collections.Counter(o for turns in got.values() for os_ in turns.values() for o in os_)
    where = "at their real sizes, cuda backend" if args.gpu else "at small sizes, CPU backend"
    lines = [f"# The model loop's acceptance run: {len(chosen)} KernelBench problems {where}, 2 samples, 3 turns", "",
             f"Command: `python3 bench/scripts/model_loop_acceptance.py --problems {args.problems}"
             + (f" --gpu --only {args.only}" if args.gpu else "")
             + (" -- " + " ".join(args.anvil_args) if args.anvil_args else "") + "`", "",
             f"- {sum(1 for r in chosen if r in honest)} problems with an honest kernel (one sample passes on turn 1, "
             f"the other fails, then passes on turn 2); {sum(1 for r in chosen if r not in honest)} scripted "
             f"through the other outcomes", f"- `anvil generate` exit {gen.returncode} in {seconds / 60:.1f} min",
             f"- attempts by outcome: {dict(sorted(outcomes.items()))}",
             f"- problems whose outcomes per turn differ from the script: {len(wrong)}", ""]
    lines += [f"  - {w}" for w in wrong[:40]]
    lines += ["", "```", table.rstrip(), "```", ""]
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    sys.exit(0 if gen.returncode == 0 and not wrong else 1)


if __name__ == "__main__":
    main()
