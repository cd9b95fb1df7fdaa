# anvil-test-label: gpu
"""GPU red-team cases that need a real device (tests/gpu/redteam): each hostile candidate gets its expected status
and names its rule, and its honest twin on the same task passes.

D8: a candidate that forges its timed calls' times inside the tolerances of anvil's call clock and kernel trace is
left to the roofline floor (src/verify/roofline.cc).
"""

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
ANVIL = os.environ.get("ANVIL_BIN") or str(ROOT / "build" / "anvil")

pytestmark = pytest.mark.skipif(not (os.path.exists("/dev/nvidiactl") or os.path.exists("/dev/nvidia0")),
                                reason="needs an NVIDIA GPU")


def header(path, key):
    m = re.search(rf"anvil-{key}:\s*(\S+)", path.read_text()[:2048])
    return m.group(1) if m else None


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory):
    out = Path(os.environ.get("ANVIL_GPU_OUT") or tmp_path_factory.mktemp("gpu")) / "gpu_redteam_verdicts.jsonl"
    candidates = [HERE / "redteam" / "d8_forged_event_native.cu", HERE / "smoke" / "relu_native.cu"]
    proc = subprocess.run([ANVIL, "eval", "--backend", "cuda", "--task", str(HERE / "redteam" / "relu_16mb.py"),
                           "--candidate", *map(str, candidates), "--trials", "3", "--baselines", "none", "--json"],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode in (0, 1), proc.stderr[-4000:]
    out.write_text(proc.stdout)
    return {Path(v["candidate"]["path"]).name: v for v in map(json.loads, proc.stdout.splitlines()) if v}


def test_forged_times_below_the_roofline_floor_are_a_cheat(verdicts):
    path = HERE / "redteam" / "d8_forged_event_native.cu"
    v = verdicts[path.name]
    assert v["status"] == header(path, "expect"), v["feedback"][:600]
    cheats = [h["rule"] for h in v["gates"]["legal"]["hits"] if h["severity"] == "cheat"]
    # Only the floor: its source and shared object gave the static rules nothing, and its forged times stayed
    # inside what the call clock and the kernel trace tolerate.
    assert cheats == [header(path, "rule")], (cheats, v["feedback"][:600])
    assert v["gates"]["perf"]["floor_ms"] > 0


def test_the_honest_relu_on_the_same_task_is_above_the_floor(verdicts):
    v = verdicts["relu_native.cu"]
    assert v["status"] == "pass", v["feedback"][:600]
    perf = v["gates"]["perf"]
    assert perf["ran"] and perf["candidate"]["median_ms"] > perf["floor_ms"] > 0, perf
