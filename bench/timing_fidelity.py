"""Timing fidelity: how well repeated measurements of one candidate and one baseline agree.

Evaluates one (task, candidate) pair R times with `anvil eval`, each time with a fresh cache folder, so the task is
prepared and its eager (and optionally torch.compile) baseline re-measured from scratch in a new process, exactly
as a first evaluation would. Prints, per repetition, the candidate's and the baselines' medians and within-run CV,
then the coefficient of variation of the R medians (the run-to-run spread a user sees).

    python bench/timing_fidelity.py --task ../shared/kernelbench/level1/40_LayerNorm.py \\
        --candidate tests/gpu/kernelbench_run/level_1_problem_40_sample_0_kernel.cu --repeats 5 --backend cuda
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def one_run(anvil, args, cache):
    cmd = [anvil, "eval", "--backend", args.backend, "--task", args.task, "--candidate", args.candidate, "--json",
           "--iters", str(args.iters), "--trials", "1", "--baselines", args.baselines, "-q"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, ANVIL_CACHE_DIR=cache))
    if proc.returncode not in (0, 1):
        sys.exit(f"anvil eval failed ({proc.returncode}): {proc.stderr[-2000:]}")
    v = json.loads(proc.stdout)
    if v["status"] != "pass":
        sys.exit(f"the candidate must pass to be timed, got {v['status']}: {v.get('feedback', '')[:500]}")
    return v["gates"]["perf"]


def cv(xs):
    return statistics.pstdev(xs) / statistics.mean(xs) if len(xs) > 1 and statistics.mean(xs) > 0 else 0.0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--task", required=True)
    p.add_argument("--candidate", required=True)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--backend", default="cuda")
    p.add_argument("--baselines", default="eager")
    p.add_argument("--anvil", default=os.environ.get("ANVIL_BIN", str(ROOT / "build" / "anvil")))
    args = p.parse_args()

    series = {}
    print(f"{'run':>3}  {'which':<9} {'median ms':>10} {'iqr ms':>8} {'cv':>6}")
    for r in range(args.repeats):
        with tempfile.TemporaryDirectory(prefix="anvil-fidelity-") as cache:
            perf = one_run(args.anvil, args, cache)
        for which in ("candidate", "eager", "compile"):
            s = perf.get(which)
            if not s:
                continue
            series.setdefault(which, []).append(s["median_ms"])
            print(f"{r:>3}  {which:<9} {s['median_ms']:>10.4f} {s['iqr_ms']:>8.4f} {s['cv']:>6.3f}", flush=True)
    print()
    print(f"{'which':<9} {'runs':>4} {'mean of medians':>16} {'min':>9} {'max':>9} {'cv of medians':>14}")
    for which, xs in series.items():
        print(f"{which:<9} {len(xs):>4} {statistics.mean(xs):>16.4f} {min(xs):>9.4f} {max(xs):>9.4f} "
              f"{cv(xs):>14.4f}")
    print(json.dumps({"task": args.task, "candidate": args.candidate, "iters": args.iters,
                      "medians_ms": series, "cv_of_medians": {k: cv(v) for k, v in series.items()}}))


if __name__ == "__main__":
    main()
