# anvil-test-label: gpu
"""GPU red-team cases that need a real device (tests/gpu/redteam): each hostile candidate gets its expected status
and names its rule, and its honest twin on the same task passes.

D8: a candidate that forges its timed calls' times (it makes the timer's sealed page writable first) is caught by
the static rules first (it walks the loader's tables, `cpp.native_tamper`); with those kept as evidence (ANVIL_STATIC_VERDICTS=0) it runs and is caught by the
kernel trace, and with the trace off as well (ANVIL_KERNEL_TRACE=0), a time below what writing its outputs takes is
caught by the roofline floor (src/verify/roofline.cc).
"""

import os
import re
from pathlib import Path

import pytest
from gpu_eval import eval_cuda

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
TASK = HERE / "redteam" / "relu_16mb.py"
FORGER = HERE / "redteam" / "d8_forged_event_native.cu"
HONEST = HERE.parent.parent / "examples" / "health" / "relu.cu"

pytestmark = pytest.mark.skipif(not (os.path.exists("/dev/nvidiactl") or os.path.exists("/dev/nvidia0")),
                                reason="needs an NVIDIA GPU")


def header(path, key):
    m = re.search(rf"anvil-{key}:\s*(\S+)", path.read_text()[:2048])
    return m.group(1) if m else None


def evaluate(name, *candidates, env=None):
    """{file name: verdict}; the verdicts also go to $ANVIL_GPU_OUT/gpu_redteam_<name>.jsonl when it is set."""
    return eval_cuda(TASK, candidates, ["--trials", "3", "--baselines", "none"], f"gpu_redteam_{name}", env)


def cheats(v):
    return [h["rule"] for h in v["gates"]["legal"]["hits"] if h["severity"] == "cheat"]


RUNTIME = {"ANVIL_STATIC_VERDICTS": "0"}  # Static cheats kept as evidence: the run-time layers behind are tested.


@pytest.fixture(scope="module")
def traced():
    return evaluate("traced", FORGER, HONEST, env=RUNTIME)


def test_the_static_rules_name_the_forger_before_it_runs():
    v = evaluate("static", FORGER)[FORGER.name]
    assert v["status"] == "cheat" and "cpp.native_tamper" in cheats(v), (cheats(v), v["feedback"][:600])
    assert not v["gates"]["run"]["ran"]


def test_forged_event_times_are_a_cheat(traced):
    v = traced[FORGER.name]
    assert v["status"] == header(FORGER, "expect"), v["feedback"][:600]
    # Caught at run time only (with the static cheats kept as evidence): its 19-26 us kernel
    # is well past the trace's 5 us slack (at 20 us, in one run of two on the H200 the floor had to catch it).
    assert "trace.event_mismatch" in cheats(v), (cheats(v), v["feedback"][:600])
    assert set(cheats(v)) <= {"trace.event_mismatch", "trace.untraced_time"}, cheats(v)


def test_without_the_trace_the_roofline_floor_catches_the_forged_times():
    v = evaluate("untraced", FORGER, env={**RUNTIME, "ANVIL_KERNEL_TRACE": "0"})[FORGER.name]
    assert v["status"] == "cheat", v["feedback"][:600]
    # The times stayed inside the call clock's tolerance: only the floor is left.
    assert cheats(v) == [header(FORGER, "rule")], (cheats(v), v["feedback"][:600])
    assert v["gates"]["perf"]["floor_ms"] > 0


def test_the_honest_relu_is_above_the_floor_and_timed_as_its_own_call(traced):
    v = traced[HONEST.name]
    assert v["status"] == "pass", v["feedback"][:600]
    perf = v["gates"]["perf"]
    assert perf["ran"] and perf["candidate"]["median_ms"] > perf["floor_ms"] > 0, perf
    # A timed call is anvil_forward itself: the harness's output allocation and poisoning happen before its
    # events (they once added 0.4 ms to this 25 us kernel).
    assert perf["candidate"]["median_ms"] < perf["trace"]["busy_ms"] + 0.1, perf
