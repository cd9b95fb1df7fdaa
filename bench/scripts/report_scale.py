#!/usr/bin/env python3
"""The report's scale benchmark (issue 37): a run of 10,000 samples made by `anvil generate` against the scripted
OpenAI server (tests/support/openai_server.py) on the CPU backend, then `anvil report`, its file size, and the time
headless Chromium takes to reach the page's load event (the page's own `data-load-ms`) and to draw a candidate.

The run: --tasks copies of examples/tasks/{relu,softmax}.py (each with a marker line, so each is its own task) over
levels 1-3, --samples each, 2 turns. Each answer is seeded prose (a few hundred words of a 2,000-word vocabulary, so
it compresses like text, not like a repeat) and a candidate drawn from a small pool per kind (pass, wrong answer,
compile or runtime error, no code), so most verdicts come from the verdict cache.

    python3 bench/scripts/report_scale.py --tasks 100 --samples 100 --out bench/results/report_scale_cpu.md
(needs scripts/setup.sh: the build, the venv, chromium)."""

import argparse
import json
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EX = ROOT / "examples"
KINDS = {
    "relu": ["relu/pass_kb.py", "relu/wrong_answer_kb.py", "relu/compile_error_kb.py", "relu/runtime_error_kb.py"],
    "softmax": ["softmax/pass_kb.py", "softmax/pass_legit_kb.py", "relu/pass_kb.py"],
}


def prose(rng, vocab, words):
    out, line = [], []
    for _ in range(words):
        line.append(rng.choice(vocab))
        if len(line) == 14:
            out.append(" ".join(line))
            line = []
    return ".\n".join(out + [" ".join(line)]) + "."


def answer(rng, vocab, kind, first):
    pool = KINDS[kind]
    if rng.random() < 0.1:
        return {"content": prose(rng, vocab, rng.randint(80, 300))}  # no code
    weights = [0.25 if first else 0.5] + [1.0] * (len(pool) - 1)
    pick = rng.choices(pool, weights)[0]
    return {"content": prose(rng, vocab, rng.randint(150, 600)) + "\n\n```python\n" +
            (EX / "candidates" / pick).read_text() + "```\n"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tasks", type=int, default=100)
    ap.add_argument("--samples", type=int, default=100)
    ap.add_argument("--seed", type=int, default=37)
    ap.add_argument("--anvil", default=str(ROOT / "build" / "anvil"))
    ap.add_argument("--cache-dir", default=str(ROOT / "build" / "test-cache"))
    ap.add_argument("--work", help="keep the run here (default: a temporary folder, removed)")
    ap.add_argument("--out")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    work = Path(args.work or tempfile.mkdtemp(prefix="anvil-report-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    tasks = work / "tasks"
    shutil.rmtree(tasks, ignore_errors=True)
    kinds = []
    for k in range(args.tasks):
        kind = "relu" if k % 2 == 0 else "softmax"
        level = 1 + k % 3
        folder = tasks / f"level{level}"
        folder.mkdir(parents=True, exist_ok=True)
        text = (EX / "tasks" / f"{kind}.py").read_text()
        (folder / f"{k + 1}_{kind.capitalize()}_{k}.py").write_text(f"# scale-kind: {kind} copy {k}\n" + text)
        if kind == "softmax" and (EX / "tasks" / "softmax.anvil.json").exists():
            shutil.copy(EX / "tasks" / "softmax.anvil.json", folder / f"{k + 1}_{kind.capitalize()}_{k}.anvil.json")
        kinds.append(kind)
    vocab_rng = random.Random(1)
    letters = "abcdefghijklmnopqrstuvwxyz"
    vocab = ["".join(vocab_rng.choice(letters) for _ in range(vocab_rng.randint(2, 10))) for _ in range(2000)]
    rules = []
    for kind in KINDS:
        n = kinds.count(kind) * args.samples
        rules.append({"context": f"scale-kind: {kind}", "turn": 1,
                      "answers": [answer(rng, vocab, kind, True) for _ in range(n)]})
        rules.append({"context": f"scale-kind: {kind}",
                      "answers": [answer(rng, vocab, kind, False) for _ in range(n)]})
    script = work / "script.json"
    script.write_text(json.dumps({"rules": rules}))
    server = subprocess.Popen([sys.executable, str(ROOT / "tests" / "support" / "openai_server.py"), "--script",
                               str(script)], stdout=subprocess.PIPE, text=True)
    url = server.stdout.readline().split()[1]
    db = work / "run.db"
    try:
        start = time.monotonic()
        proc = subprocess.run([args.anvil, "generate", "--endpoint", url, "--model", "scripted-scale", "--tasks",
                               str(tasks), "--out", str(db), "--samples", str(args.samples), "--turns", "2",
                               "--no-perf", "--trials", "2", "--cache-dir", args.cache_dir, "-j", "2", "-q"],
                              capture_output=True, text=True, timeout=7200)
        generate_s = time.monotonic() - start
        if proc.returncode != 0:
            sys.exit(f"anvil generate: {proc.stderr[-3000:]}")
    finally:
        server.kill()
        server.wait()
    page = work / "report.html"
    start = time.monotonic()
    proc = subprocess.run([args.anvil, "report", str(db), "-o", str(page)], capture_output=True, text=True,
                          timeout=3600)
    report_s = time.monotonic() - start
    if proc.returncode != 0:
        sys.exit(f"anvil report: {proc.stderr[-3000:]}")
    data = json.loads(re.search(r'id="anvil-data">(.*?)</script>', page.read_text(), re.S).group(1))
    samples = len(data["samples"])
    attempts = sum(len(s["attempts"]) for s in data["samples"])
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")

    def load(fragment="", attribute="data-load-ms"):
        start = time.monotonic()
        dom = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                              "--virtual-time-budget=30000", "--dump-dom", page.as_uri() + fragment],
                             capture_output=True, text=True, timeout=600).stdout
        wall = time.monotonic() - start
        ms = re.search(rf'{attribute}="(\d+)"', dom)
        return (int(ms.group(1)) if ms else None), wall, dom

    loads = [load() for _ in range(5)]
    load_ms = [x[0] for x in loads]
    shown = load(f"#c/{samples - 1}/1")
    candidate_ok = f'data-shown="c/{samples - 1}/1"' in shown[2]
    size = page.stat().st_size
    chunks = len(re.findall(r'id="anvil-text-', page.read_text()))
    lines = [
        f"# The run report at scale: {samples:,} samples",
        "",
        f"Command: `python3 {Path(__file__).relative_to(ROOT)} --tasks {args.tasks} --samples {args.samples}"
        f"{' --out ' + args.out if args.out else ''}` (seed {args.seed}; the CPU machine: 2 cores, 24 GiB; "
        f"headless Chromium {subprocess.run([chromium, '--version'], capture_output=True, text=True).stdout.strip()}).",
        "",
        f"- The run: {args.tasks} tasks (ReLU and softmax copies over levels 1-3) x {args.samples} samples, up to 2 "
        f"turns: {samples:,} samples, {attempts:,} attempts; `anvil generate` against the scripted server took "
        f"{generate_s:.0f} s (`--no-perf`, most verdicts from the verdict cache); the database is "
        f"{db.stat().st_size / 1e6:.1f} MB.",
        f"- `anvil report`: {report_s:.1f} s; the file is **{size / 1e6:.1f} MB** (limit 50 MB), its load-time data "
        f"{len(json.dumps(data)) / 1e6:.1f} MB of JSON, the texts {chunks} "
        f"compressed chunks.",
        f"- Load event in headless Chromium (`data-load-ms`, 5 loads): **median {statistics.median(load_ms)} ms** "
        f"(limit 2,000 ms); each: {', '.join(str(x) for x in load_ms)} ms; Chromium's whole run (start, load, dump "
        f"the DOM) {statistics.median([x[1] for x in loads]):.1f} s.",
        f"- A candidate page opened by its link (`#c/{samples - 1}/1`, its task's texts decompressed): "
        f"{'drawn' if candidate_ok else 'NOT drawn'}.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
