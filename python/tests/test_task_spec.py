"""The spec without tensors (anvil_py.task_spec): KernelBench's real sizes cost no memory, and a reference that needs
values is named, not materialised."""

import resource
from pathlib import Path

import pytest

from anvil_py import task_spec

ROOT = Path(__file__).resolve().parents[2]
KERNELBENCH = ROOT.parent / "shared" / "kernelbench"


@pytest.mark.skipif(not KERNELBENCH.exists(), reason="no ../shared/kernelbench")
def test_real_sizes_cost_no_memory():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    spec = task_spec.derive(str(KERNELBENCH / "level3" / "1_MLP.py"))
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert spec["without_tensors"] and spec["device"] == "meta"
    shapes = [p["shape"] for p in spec["params"]]
    assert [16384, 16384] in shapes  # A 1 GiB float32 weight, described, never made.
    assert grown_mb < 400, grown_mb
    assert spec["ops"] and all("in_shapes" in op for op in spec["ops"])


def test_a_reference_that_needs_values_is_named():
    spec = task_spec._spec_or_error(str(ROOT / "tests" / "data" / "spec_tasks" / "needs_values.py"))
    assert "error" in spec and "meta" in spec["error"]
