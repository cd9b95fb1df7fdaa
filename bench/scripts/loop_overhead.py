"""The model loop's own overhead per turn (issue 32's target: <= 20 ms p50): prompt building, answer parsing,
bookkeeping and the run database, without the model's time or the verifier's.

A scripted server answers at once with no code (so nothing is judged); `anvil generate` runs SAMPLES samples of one
task for TURNS turns, one request at a time. Between two consecutive requests of the one thread that asks, the loop
records the answer and builds the next request: from the run database's request rows (created_at: when the answer
was recorded; latency_s: the HTTP call), ordered by created_at, that gap is
    (created_at[i+1] - latency_s[i+1]) - created_at[i]
which holds the recording's commit (it comes before the next send on that thread) but not the few microseconds
between the HTTP call's end and created_at. The median over all gaps of REPEATS runs is the result; the HTTP round trip to the local server is reported apart. An upper bound that also holds what happens
before a turn's first request (repair messages, the database reads) and anvil's own start: (wall - all HTTP calls) /
attempts.

    python3 bench/scripts/loop_overhead.py [--samples 100] [--turns 3] [--repeats 3] [--tasks PATH] [--out FILE.md]

--tasks: a task file or tree instead of examples/tasks/relu.py (e.g. the 165 KernelBench problems at CPU sizes:
`bench/scripts/shrink_kernelbench.py make DIR`).
"""

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ANVIL = os.environ.get("ANVIL_BIN") or str(ROOT / "build" / "anvil")


def one_run(folder, tasks, samples, turns):
    script = folder / "script.json"
    script.write_text(json.dumps({"rules": [{"answers": [{"content": "I would write a loop."}]}]}))
    server = subprocess.Popen([sys.executable, str(ROOT / "tests" / "support" / "openai_server.py"), "--script",
                               str(script)], stdout=subprocess.PIPE, text=True)
    url = server.stdout.readline().split()[1]
    out = folder / "run.db"
    env = {k: v for k, v in os.environ.items() if "KEY" not in k}
    started = time.monotonic()
    proc = subprocess.run([ANVIL, "generate", "--endpoint", url, "--model", "bench", "--tasks",
                           str(tasks), "--samples", str(samples), "--turns",
                           str(turns), "--concurrency", "1", "--out", str(out), "-q"],
                          capture_output=True, text=True, env=env)
    wall = time.monotonic() - started
    server.kill()
    server.wait()
    if proc.returncode != 0:
        raise SystemExit(proc.stderr)
    db = sqlite3.connect(out)
    rows = db.execute("SELECT created_at, latency_s FROM request ORDER BY created_at").fetchall()
    http = [latency for _, latency in rows]
    gaps = [(after - latency) - before for (before, _), (after, latency) in zip(rows, rows[1:])]
    return gaps, http, wall, len(rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=100)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tasks", default=str(ROOT / "examples" / "tasks" / "relu.py"))
    parser.add_argument("--out")
    args = parser.parse_args()
    all_gaps, all_http, lines, bounds = [], [], [], []
    for r in range(args.repeats):
        with tempfile.TemporaryDirectory() as tmp:
            gaps, http, wall, attempts = one_run(Path(tmp), args.tasks, args.samples, args.turns)
        all_gaps += gaps
        all_http += http
        bounds.append((wall - sum(http)) / attempts)
        lines.append(f"run {r + 1}: {attempts} attempts in {wall:.2f} s wall; loop gap p50 "
                     f"{1000 * statistics.median(gaps):.2f} ms")
    q = statistics.quantiles(all_gaps, n=100)
    result = (f"loop's own overhead per turn: p50 {1000 * statistics.median(all_gaps):.2f} ms, p90 "
              f"{1000 * q[89]:.2f} ms, max {1000 * max(all_gaps):.2f} ms over {len(all_gaps)} gaps; HTTP round trip to "
              f"the local scripted server p50 {1000 * statistics.median(all_http):.2f} ms; upper bound (wall - HTTP) / "
              f"attempts, median of runs: {1000 * statistics.median(bounds):.2f} ms")
    text = "\n".join(lines + [result])
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
