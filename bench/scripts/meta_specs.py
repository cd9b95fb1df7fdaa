"""Specs without tensors over the whole KernelBench set (python/anvil_py/task_spec.py): how many problems of
../shared/kernelbench derive on the meta device, how long they take in one process, the process's peak memory, and
why the others do not. Also the memory one real-size problem costs (level3/1_MLP: three 16384-wide float32 weights,
over 2 GiB if they were made).

    python3 bench/scripts/meta_specs.py [--kernelbench ../shared/kernelbench] [--out FILE.md]
"""

import argparse
import glob
import os
import resource
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

from anvil_py import task_spec  # noqa: E402


def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernelbench", default=str(ROOT.parent / "shared" / "kernelbench"))
    parser.add_argument("--out")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    before = peak_mb()
    task_spec.derive(os.path.join(args.kernelbench, "level3", "1_MLP.py"))
    mlp_growth = peak_mb() - before
    files = sorted(glob.glob(os.path.join(args.kernelbench, "level*", "*.py")))
    failed = []
    started = time.monotonic()
    for f in files:
        try:
            task_spec.derive(f)
        except Exception as e:  # Said below, one line each.
            failed.append(f"{Path(f).parent.name}/{Path(f).name}: {type(e).__name__}: {str(e)[:160]}")
    seconds = time.monotonic() - started
    lines = [f"{len(files) - len(failed)} of {len(files)} problems derived without tensors in {seconds:.1f} s "
             f"(one process); peak memory {peak_mb():.0f} MB",
             f"level3/1_MLP alone grew the process by {mlp_growth:.0f} MB (torch's meta-kernel imports included)"]
    lines += [f"not derived: {f}" for f in failed]
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
