# anvil-test-label: gpu
"""A device that a process outside anvil holds (issue 38, item 3; docs/verdict.md "A device others held"): the
candidate's failure there is infra_error, tried again once the device is idle, never the candidate's; a candidate
that takes the whole device fails by itself."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from gpu_eval import eval_cuda

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
TASK = HERE / "redteam" / "relu_1g.py"
HONEST = ROOT / "examples" / "health" / "relu.cu"
FREE_MB = 1024  # What the hog leaves: less than judging the 1 GiB task needs (its input, outputs, reference).

pytestmark = pytest.mark.skipif(not (os.path.exists("/dev/nvidiactl") or os.path.exists("/dev/nvidia0")),
                                reason="needs an NVIDIA GPU")


def evaluate(tmp, name, *candidates, task=TASK, args=()):
    return eval_cuda(task, candidates, ["--trials", "2", "--no-perf", "--cache-dir", tmp / "cache", *args],
                     f"gpu_device_hog_{name}")


class Hog:
    def __init__(self, tmp, hold_s, free_mb=FREE_MB):
        ready = tmp / "hog.ready"
        ready.unlink(missing_ok=True)
        self.proc = subprocess.Popen([sys.executable, str(HERE / "device_hog.py"), str(free_mb), str(hold_s),
                                      str(ready)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        deadline = time.time() + 120
        while not ready.exists():
            assert self.proc.poll() is None and time.time() < deadline, self.proc.communicate()[0]
            time.sleep(0.1)

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.proc.kill()
        self.proc.wait()


@pytest.fixture(scope="module")
def tmp(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hog")
    # Prepared and built once with the device to itself: the hog's cases below judge a known task.
    got = evaluate(tmp, "none_before", HONEST)
    assert got["relu.cu"]["status"] == "pass", got["relu.cu"]
    return tmp


def test_a_hog_that_stays_makes_infra_error_never_the_candidates(tmp):
    with Hog(tmp, 600) as hog:
        got = evaluate(tmp, "held", HONEST, args=("--idle-device-wait", "5"))
    v = got["relu.cu"]
    assert v["status"] == "infra_error", (v["status"], v.get("error"), v["gates"]["run"])
    assert v.get("reward") is None
    assert f"pid {hog.proc.pid}" in v["error"], v["error"]
    assert "not idle" in v["error"], v["error"]
    assert not v.get("suspect_candidate"), v


def test_a_hog_that_leaves_lets_the_retry_pass(tmp):
    with Hog(tmp, 20):
        got = evaluate(tmp, "leaves", HONEST, args=("--idle-device-wait", "120"))
    v = got["relu.cu"]
    assert v["status"] == "pass", (v["status"], v.get("error"), v["gates"]["run"])
    assert v["infra_retries"] >= 1, v


def test_a_candidates_own_run_failing_for_the_hog_is_the_machines(tmp):
    """The server holds the small task; the candidate's run asks for 3 GiB of scratch, which the hog leaves no room
    for: its words say out of memory and the driver saw the hog's memory during its run (device_busy)."""
    scratch = HERE / "redteam" / "scratch_3g.cu"
    small = HERE / "redteam" / "relu_16mb.py"
    alone = evaluate(tmp, "scratch_alone", scratch, task=small)
    assert alone["scratch_3g.cu"]["status"] == "pass", alone["scratch_3g.cu"]["gates"]["run"]
    with Hog(tmp, 600, free_mb=2048) as hog:
        got = evaluate(tmp, "scratch_held", scratch, task=small, args=("--idle-device-wait", "5"))
    v = got["scratch_3g.cu"]
    assert v["status"] == "infra_error" and v.get("reward") is None, (v["status"], v.get("error"), v["gates"]["run"])
    assert "while processes other than the candidate's held" in v["error"], v["error"]
    assert f"pid {hog.proc.pid}" in v["error"] and "not idle" in v["error"], v["error"]
    with Hog(tmp, 20, free_mb=2048):
        got = evaluate(tmp, "scratch_leaves", scratch, task=small, args=("--idle-device-wait", "120"))
    v = got["scratch_3g.cu"]
    assert v["status"] == "pass" and v["infra_retries"] >= 1, (v["status"], v.get("error"), v["gates"]["run"])


def test_a_candidate_taking_the_whole_device_fails_by_itself_also_beside_another(tmp):
    got = evaluate(tmp, "whole", HONEST, HERE / "redteam" / "hog_all.cu", task=HERE / "redteam" / "relu_16mb.py",
                   args=("-j", "2"))
    assert got["relu.cu"]["status"] == "pass", got["relu.cu"]
    v = got["hog_all.cu"]
    assert v["status"] == "runtime_error" and v["reward"] == -1, (v["status"], v.get("error"), v["gates"]["run"])
