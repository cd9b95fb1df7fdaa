"""Baselines timed by the task server (docs/protocol.md, "baselines"): the reference that
compares a candidate's trials, kept warm there, is the one timed, eager and torch.compile'd, in the server's process
— no worker of its own started and no model built again; ANVIL_BASELINE_WORKER=1 times them in workers as before."""

import uuid

from conftest import EXAMPLES, eval_json

# The ReLU task, its reference noting the process of each call.
TASK = """import os
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        with open({calls!r}, "a") as f:
            f.write(f"{{os.getpid()}}\\n")
        return torch.relu(x)


def get_inputs():
    return [torch.randn(16, 1024)]


def get_init_inputs():
    return []
# {tag}
"""


def processes(calls):
    """The processes that called the reference, in the order of their first call, with their counts."""
    counts = {}
    for pid in calls.read_text().split():
        counts[pid] = counts.get(pid, 0) + 1
    return list(counts.values())


def run(tmp_path, name, env, baselines):
    calls = tmp_path / f"{name}.calls"
    task = tmp_path / f"{name}.py"
    task.write_text(TASK.format(calls=str(calls), tag=uuid.uuid4()))  # Prepared and measured in this test only.
    verdicts, p = eval_json("-t", str(task), "-c", str(EXAMPLES / "candidates" / "relu" / "pass_kb.py"),
                            "--baselines", baselines, "--warmup", "2", "--iters", "5", "--timeout", "120", env=env)
    assert p.returncode == 0 and len(verdicts) == 1, p.stderr
    return verdicts[0], processes(calls)


def test_the_server_times_the_baselines_with_the_reference_it_keeps(tmp_path):
    v, by_process = run(tmp_path, "served", {}, "eager,compile")
    assert v["status"] == "pass" and v["gates"]["run"]["trial_data"] == "server", v["status"]
    perf = v["gates"]["perf"]
    assert perf["eager"]["samples"] == 5 and perf["compile"]["samples"] == 5, perf
    assert not perf["eager_error"] and not perf["compile_error"], perf
    assert v["baseline_compile_seconds"] > 0 and v["work_seconds"]["baselines"] > 0, v
    # Where the stage went: the server's phases, the compile apart, and anvil's side the rest of it.
    phases = v["baseline_phase_seconds"]
    assert set(phases) == {"task", "inputs", "dynamo", "calls", "reset", "release", "collect", "give_back",
                           "wait", "anvil"}, phases
    # One verdict alone: nothing else ran task code in the server, nothing to wait for (and the verdict's waits for
    # the server hold the baselines' own).
    assert phases["wait"] < 0.2 and phases["wait"] <= v["server_wait_seconds"] < 0.5, (phases, v)
    assert phases["calls"] > 0 and phases["reset"] > 0, phases  # torch.compile's code dropped after its calls.
    said = sum(phases.values()) + v["baseline_compile_seconds"]
    assert abs(said - v["stage_seconds"]["baselines"]) < 0.01, (said, v["stage_seconds"])
    # The reference's open() in a with statement: dynamo skips the whole frame, torch.compile runs it eagerly, and
    # the verdict says so (python/tests/test_task_server.py has one that compiles).
    assert perf["compile_graphs"] == 0, perf
    # Two processes ran the reference: the preparation, then the server (the trials' references, both baselines'
    # warmup and timed calls, torch.compile's first call).
    assert len(by_process) == 2, by_process
    assert by_process[1] >= 3 + 2 * (2 + 5) + 1, by_process


def test_baseline_workers_when_asked(tmp_path):
    v, by_process = run(tmp_path, "workers", {"ANVIL_BASELINE_WORKER": "1"}, "eager,compile")
    perf = v["gates"]["perf"]
    assert v["status"] == "pass" and perf["eager"]["samples"] == 5 and perf["compile"]["samples"] == 5, perf
    assert perf["compile_graphs"] == 0, perf  # As the server says (above).
    assert "baseline_phase_seconds" not in v, v  # Phases are the server's.
    # The preparation, the server, the eager baseline's worker (its warmup and timed calls), the compile one's.
    assert len(by_process) == 4 and by_process[2] == 2 + 5, by_process
