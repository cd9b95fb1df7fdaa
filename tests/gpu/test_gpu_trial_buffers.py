# anvil-test-label: gpu
"""Trial data in device memory (issue 38, step 4): on the cuda backend the task server hands the candidate's worker
each tensor as an allocation of its own in device memory (python/anvil_py/device_buffers.py), exported as a file
descriptor on the trial channel, and takes the outputs and the rechecked outputs back in such buffers."""

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from gpu_eval import eval_cuda

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
TASK = HERE / "redteam" / "relu_16mb.py"
HONEST = ROOT / "examples" / "health" / "relu.cu"

pytestmark = pytest.mark.skipif(not (os.path.exists("/dev/nvidiactl") or os.path.exists("/dev/nvidia0")),
                                reason="needs an NVIDIA GPU")

# The receiving side, in a process of its own: maps each descriptor it gets and says what it found.
IMPORTER = r"""
import json, socket, sys, time
import torch
from anvil_py import device_buffers
sock = socket.socket(fileno=int(sys.argv[1]))
found = {}
for name in ("values", "padding", "too_large"):
    data, fds, _, _ = socket.recv_fds(sock, 4096, 1)
    shape = json.loads(data)["shape"]
    time.sleep(0.2)  # The sender has let go of its own mapping and handle by now.
    try:
        t = device_buffers.import_buffer(fds[0], 0, torch.float32, shape)
        found[name] = {"sum": float(t.double().sum()), "first": t.reshape(-1)[:3].tolist(), "numel": t.numel()}
        t.fill_(7.0)
        torch.cuda.synchronize()
    except device_buffers.DeviceBufferError as e:
        found[name] = {"error": str(e)}
print(json.dumps(found))
"""


def test_a_buffer_reaches_another_process_as_a_descriptor_and_holds_nothing_else():
    import torch  # noqa: PLC0415 - only where a GPU is

    from anvil_py import device_buffers  # noqa: PLC0415

    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    child = subprocess.Popen([sys.executable, "-c", IMPORTER, str(theirs.fileno())], pass_fds=[theirs.fileno()],
                             stdout=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT / "python")))
    theirs.close()
    granule = device_buffers._get_driver().padded(0, 1) // 4
    kept = []
    for name, n, shape in (("values", 1000, [1000]), ("padding", 3, [granule]), ("too_large", 3, [granule + 1])):
        fd, t = device_buffers.new_buffer(0, torch.float32, [n])
        t.copy_(torch.arange(1, n + 1, dtype=torch.float32, device="cuda"))
        torch.cuda.synchronize()
        socket.send_fds(mine, [json.dumps({"shape": shape}).encode()], [fd])
        os.close(fd)
        if name == "values":
            del t  # This side lets go at once: the descriptor in flight keeps the memory.
        else:
            kept.append(t)
    out, _ = child.communicate(timeout=120)
    found = json.loads(out)
    assert found["values"]["sum"] == 1000 * 1001 / 2, found
    # Mapped whole (its granule), a 3-float allocation shows its 3 values and zeros after them: nothing else.
    assert found["padding"] == {"sum": 6.0, "first": [1.0, 2.0, 3.0], "numel": granule}, found
    assert "cuMemMap" in found["too_large"]["error"] or "cuMem" in found["too_large"]["error"], found
    # The receiver's writes landed in the sender's memory: one allocation, shared.
    assert kept[0][:3].tolist() == [7.0, 7.0, 7.0]


def evaluate(*candidates, env=None, name="server"):
    return eval_cuda(TASK, candidates, ["--trials", "3", "--baselines", "none", "--iters", "20"],
                     f"gpu_trial_buffers_{name}", env)


def details(v):
    # The largest error to 6 digits: the server takes the difference of float32 values in float64 (1 - 1.9e-9 for an
    # element off by one).
    return [(t["trial"], t["problem"],
             [(o["name"], o.get("mismatches"), o.get("first_mismatch"),
               o.get("max_abs_error") and float(f"{o['max_abs_error']:.6g}")) for o in t["outputs"]])
            for t in v["gates"]["correct"]["details"]]


def off_by_one(tmp_path):
    """The honest ReLU with element 7 one too large: each trial's comparison must find exactly that."""
    wrong = tmp_path / "relu_off_by_one.cu"
    wrong.write_text(HONEST.read_text().replace("y[i] = fmaxf(x[i], 0.0f);", "y[i] = fmaxf(x[i], 0.0f) + (i == 7);"))
    return wrong


OFF_BY_ONE = [(k, "values", [("out0", 1, 7, 1.0)]) for k in range(3)]


def test_device_buffers_give_each_candidate_its_verdict(tmp_path):
    wrong = off_by_one(tmp_path)
    by_server = evaluate(HONEST, wrong)
    assert by_server[HONEST.name]["status"] == "pass", by_server[HONEST.name]["feedback"]
    assert by_server[wrong.name]["status"] == "wrong_answer", by_server[wrong.name]["feedback"]
    for name in (HONEST.name, wrong.name):
        assert by_server[name]["gates"]["run"]["trial_data"] == "server"
    assert details(by_server[wrong.name]) == OFF_BY_ONE
    perf = by_server[HONEST.name]["gates"]["perf"]
    # Each timed call's inputs are written by the server after the worker's `ready`, and the compiled timer flushes
    # the L2 after `go`, outside the call's trace window (a flush inside it made the honest ReLU's traced work exceed
    # its events: a cheat); the rechecks are compared by the server.
    assert perf["timed_inputs"] == "written_after_ready", perf
    assert len(perf["rechecked"]) == 8, perf  # 8 of its 20 timing sets, compared by the server.


def test_timed_inputs_preloaded_on_cuda_keep_the_verdicts(tmp_path):
    """ANVIL_CUDA_SETS_WRITTEN=0 (to compare): the timed sets are copies in device buffers loaded before the
    warmup."""
    wrong = off_by_one(tmp_path)
    preloaded = evaluate(HONEST, wrong, env={"ANVIL_CUDA_SETS_WRITTEN": "0"}, name="preloaded")
    honest = preloaded[HONEST.name]
    assert honest["status"] == "pass", honest["feedback"]
    assert honest["gates"]["perf"]["timed_inputs"] == "preloaded", honest["gates"]["perf"]
    assert preloaded[wrong.name]["status"] == "wrong_answer"
    assert details(preloaded[wrong.name]) == OFF_BY_ONE


def test_the_buffers_a_process_made_count_until_it_lets_go():
    # The task server's budget counts what it exported (Tasks.in_use_bytes): the allocations it made and still maps.
    import gc  # noqa: PLC0415

    import torch  # noqa: PLC0415

    from anvil_py import device_buffers  # noqa: PLC0415

    before = device_buffers.exported_bytes()
    fd, t = device_buffers.new_buffer(0, torch.float32, [1 << 20])
    os.close(fd)
    assert device_buffers.exported_bytes() == before + device_buffers._get_driver().padded(0, 4 << 20)
    del t
    gc.collect()
    assert device_buffers.exported_bytes() == before


def test_memory_held_by_a_garbage_cycle_goes_back_to_the_device():
    # The task server collects garbage cycles only when torch holds more than its kept tasks (Tasks.give_back_memory;
    # python/tests/test_task_server.py has the rule): a cycle holding 256 MiB of the device is found and given back.
    import gc  # noqa: PLC0415

    import torch  # noqa: PLC0415

    from anvil_py.task_store import Tasks  # noqa: PLC0415

    tasks = Tasks(torch.device("cuda", 0), 1 << 30)
    gc.disable()  # Only give_back_memory may collect it.
    try:
        before = torch.cuda.memory_allocated(0)
        cycle = [torch.empty(64 << 20, dtype=torch.float32, device="cuda:0")]
        cycle.append(cycle)
        del cycle
        free_before = torch.cuda.mem_get_info(0)[0]
        assert torch.cuda.memory_allocated(0) == before + (256 << 20)
        tasks.give_back_memory()
        assert torch.cuda.memory_allocated(0) == before and tasks.stats()["collections"] == 1
        assert torch.cuda.mem_get_info(0)[0] >= free_before + (256 << 20)  # Back to the device, not torch's cache.
    finally:
        gc.enable()
        gc.unfreeze()  # The collection froze what survived it (nothing ran): this process's tests go on.


def test_a_buffer_refused_for_memory_says_what_the_server_held():
    # The message of a session whose buffer the device refused (task_server._send) names the server's pieces: the
    # 17 GB-trial sessions that ran out of an H100's memory said nothing of them (all_problems_h100_call8.md).
    import torch  # noqa: PLC0415

    from anvil_py import device_buffers  # noqa: PLC0415
    from anvil_py.task_store import Tasks  # noqa: PLC0415

    tasks = Tasks(torch.device("cuda", 0), 1 << 30)
    live = torch.empty(64 << 20, dtype=torch.float32, device="cuda:0")  # 256 MiB in use beside no kept task.
    fd, exported = device_buffers.new_buffer(0, torch.float32, [32 << 20])  # 128 MiB exported.
    os.close(fd)
    said = tasks.holdings()
    assert "0 kept task(s) 0 MiB" in said and "budget's 1024 MiB" in said, said
    mib = {k: int(re.search(k + r" (\d+) MiB", said).group(1)) for k in ("tensors", "buffers exported")}
    assert mib["tensors"] >= 256 and mib["buffers exported"] >= 128, said  # This process's tests' others too.
    assert said.startswith(f"the task server held {mib['tensors'] + mib['buffers exported']} MiB"), said
    del live, exported
