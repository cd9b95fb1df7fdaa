# anvil-test-label: gpu
"""A cuda run's device-memory quota (issue 38; docs/sandbox.md "Quotas"): the driver's per-process count (NVML) of the
run's processes, read every 20 ms; past the quota anvil kills the run, the candidate's own runtime_error naming the
quota. An honest candidate stays well within it."""

import os
from pathlib import Path

import pytest
from gpu_eval import eval_cuda

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
TASK = HERE / "redteam" / "relu_16mb.py"
HONEST = ROOT / "examples" / "health" / "relu.cu"

pytestmark = pytest.mark.skipif(not (os.path.exists("/dev/nvidiactl") or os.path.exists("/dev/nvidia0")),
                                reason="needs an NVIDIA GPU")


def evaluate(*candidates, quota):
    return eval_cuda(TASK, candidates, ["--trials", "3", "--baselines", "none", "--iters", "5",
                                        "--quota-device-memory", quota], f"gpu_device_memory_{quota}")


def test_a_run_over_its_device_memory_quota_is_killed_and_the_verdict_names_it():
    got = evaluate(HONEST, HERE / "redteam" / "hog_6g.cu", HERE / "redteam" / "hog_all.cu", quota="4G")
    honest = got["relu.cu"]
    assert honest["status"] == "pass", honest["gates"]["run"]
    assert honest["quotas"]["run_device_memory_bytes"] == 4 << 30
    for name in ("hog_6g.cu", "hog_all.cu"):
        v = got[name]
        run = v["gates"]["run"]
        assert v["status"] == "runtime_error" and run["stage"] == "device_memory_quota", (name, v["status"], run)
        assert "device-memory quota of 4096 MiB" in run["message"], run["message"]
        assert "reward" in v and v["reward"] == -1, v["reward"]  # Its own failure, never the machine's.


def test_the_default_quota_is_half_the_device_and_stops_a_candidate_taking_all_of_it():
    import torch  # noqa: PLC0415 - only where a GPU is

    half = torch.cuda.get_device_properties(0).total_memory // 2
    got = evaluate(HONEST, HERE / "redteam" / "hog_all.cu", quota="auto")
    assert got["relu.cu"]["status"] == "pass"
    # NVML's count of the device's memory, halved: torch's, within 2 % (the driver keeps some for itself).
    assert abs(got["relu.cu"]["quotas"]["run_device_memory_bytes"] - half) < half // 50
    v = got["hog_all.cu"]
    assert v["status"] == "runtime_error" and v["gates"]["run"]["stage"] == "device_memory_quota", v["gates"]["run"]
