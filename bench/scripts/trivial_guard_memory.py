"""Peak host memory of the trivial-output guard's comparison (python/anvil_py/trivial_guard.py) on one output of
2^BITS float32 elements, compared whole (one float64 pass) or in slabs (the guard's way), on the CPU.

    python3 bench/scripts/trivial_guard_memory.py whole 26
    python3 bench/scripts/trivial_guard_memory.py chunked 28
"""

import resource
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
from anvil_py import trivial_guard  # noqa: E402

mode, bits = sys.argv[1], int(sys.argv[2])
n = 1 << bits
e = torch.rand(1 << 13, n >> 13)
a = e.clone()
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
if mode == "whole":
    ok = trivial_guard._allclose(e, a, 1e-4, 1e-4, True, chunk=1 << 40)
else:
    ok = trivial_guard._allclose(e, a, 1e-4, 1e-4, True)
    guard = trivial_guard.OutputGuard(0, e, (1e-4, 1e-4), True)
    ok = ok and not guard.passes(guard.forms(e, [a])["zeros"], e, False)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(f"{mode}: {ok}, extra peak {(peak - base) / 1024:.0f} MiB for a {n * 4 >> 20} MiB output")
