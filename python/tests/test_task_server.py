"""The task server on its own (anvil_py/task_server.py): sessions, inputs as sealed memfds, the budget, and a
candidate that breaks the protocol."""

import fcntl
import os
import select
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from anvil_py import compare_torch, trial_channel
from anvil_py.task_loader import load_module
from anvil_py.task_worker import make_inputs
from anvil_py.trial_channel import ChannelError, TrialData

ROOT = Path(__file__).resolve().parents[2]
TASKS = ROOT / "examples" / "tasks"


class Server:
    def __init__(self, *flags, env=None):
        self.control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        env = dict(os.environ, PYTHONPATH=str(ROOT / "python"), **(env or {}))
        self.proc = subprocess.Popen([sys.executable, "-m", "anvil_py.task_server", "--control-fd",
                                      str(theirs.fileno()), *flags], pass_fds=[theirs.fileno()], env=env)
        theirs.close()
        self.control.settimeout(120)
        hello, _ = trial_channel.receive(self.control)
        assert hello["ready"] is True, hello
        self.budget = hello["budget_bytes"]
        self.ids = iter(range(1, 1000))

    def ask(self, message, fds=()):
        message["id"] = next(self.ids)
        trial_channel.send(self.control, message, fds)
        reply, _ = trial_channel.receive(self.control)
        assert reply["id"] == message["id"]
        return reply

    def open(self, task, seeds, prepared=None):
        """(reply, the candidate's end, session id)."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        reply = self.ask({"op": "open", "task": str(task), "prepared": prepared or str(task), "seeds": seeds},
                         [theirs.fileno()])
        theirs.close()
        return reply, ours

    def close(self, sid):
        return self.ask({"op": "close", "session": sid})

    def stop(self):
        self.control.close()
        return self.proc.wait(timeout=30)


@pytest.fixture
def server():
    s = Server()
    yield s
    s.stop()


def fresh_inputs(task, seed):
    module = load_module(str(task), f"expected_{task.stem}_{seed}")
    return make_inputs(module.get_inputs, seed, "cpu")


def test_inputs_come_as_the_seeds_make_them_each_trial_once(server):
    reply, end = server.open(TASKS / "relu.py", ["11", "12"])
    assert reply["ok"] and reply["trials"] == 2
    sid = reply["id"]
    data = TrialData(os.dup(end.fileno()))
    assert data.trials == 2
    for k, seed in enumerate((11, 12)):
        got = data.inputs("trial", k, "cpu")
        want = fresh_inputs(TASKS / "relu.py", seed)
        assert len(got) == len(want) and all(torch.equal(g, w) for g, w in zip(got, want))
    # The candidate's copy is its own: writing to it changes nothing the next candidate gets.
    got[0].fill_(7)
    # A trial asked for twice is refused, and the session ends.
    with pytest.raises(ChannelError, match="sent already"):
        data.inputs("trial", 0, "cpu")
    closed = server.close(sid)
    assert closed["served"] == [0, 1] and closed["error"] == ""
    assert "sent already" in closed["candidate_error"]
    reply, end2 = server.open(TASKS / "relu.py", ["11", "12"])
    again = TrialData(end2.detach()).inputs("trial", 1, "cpu")
    assert torch.equal(again[0], fresh_inputs(TASKS / "relu.py", 12)[0])
    assert server.close(reply["id"])["served"] == [1]
    stats = server.ask({"op": "stats"})
    assert stats["loads"] == 1 and stats["hits"] == 1, stats


@pytest.mark.parametrize("request_", [{"get": "expected", "k": 0}, {"get": "trial", "k": 5}, {"get": "trial", "k": "0"},
                                      {"get": "trial", "k": 0, "seed": 1}])
def test_a_request_anvil_does_not_know_ends_the_session_not_the_server(server, request_):
    reply, end = server.open(TASKS / "relu.py", ["3"])
    trial_channel.receive(end)  # hello
    trial_channel.send(end, request_)
    answer, _ = trial_channel.receive(end)
    assert "error" in answer and "tensors" not in answer
    closed = server.close(reply["id"])
    assert closed["served"] == [] and closed["candidate_error"] and closed["error"] == ""
    # Garbage on the socket, and descriptors the candidate sends, likewise.
    reply, end = server.open(TASKS / "relu.py", ["3"])
    trial_channel.receive(end)
    r, w = os.pipe()
    socket.send_fds(end, [b"not json"], [r, w])
    os.close(r)
    os.close(w)
    answer, _ = trial_channel.receive(end)
    assert "descriptors came where none were expected" in answer["error"]
    assert "broke the channel's protocol" in server.close(reply["id"])["candidate_error"]
    reply, end = server.open(TASKS / "relu.py", ["3"])
    assert torch.equal(TrialData(end.detach()).inputs("trial", 0, "cpu")[0], fresh_inputs(TASKS / "relu.py", 3)[0])
    server.close(reply["id"])


def test_a_task_that_fails_is_the_sessions_error_and_the_server_goes_on(server, tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import torch\ndef get_inputs():\n    raise ValueError('no inputs here')\n")
    reply, _ = server.open(bad, ["1"])
    assert "no inputs here" in reply["error"] and "get_inputs" in reply["error"]
    reply, end = server.open(TASKS / "relu.py", ["5"])
    assert reply["ok"]
    server.close(reply["id"])


def test_inputs_the_server_cannot_send_are_its_error_and_the_candidate_hears_at_once(server, tmp_path):
    # A server that fails sending (here a dtype the channel has no name for; on a GPU, a device out of memory) must
    # not leave the candidate waiting for an answer until its timeout: that verdict would be the candidate's.
    odd = tmp_path / "odd.py"
    odd.write_text("import torch\ndef get_inputs():\n    return [torch.zeros(4, dtype=torch.complex64)]\n")
    reply, end = server.open(odd, ["1"])
    assert reply["ok"], reply
    trial_channel.receive(end)  # hello
    trial_channel.send(end, {"get": "trial", "k": 0})
    assert select.select([end], [], [], 30)[0], "the candidate was left waiting"
    answer, _ = trial_channel.receive(end)
    assert "task server failed" in answer["error"] and "not the candidate's doing" in answer["error"]
    closed = server.close(reply["id"])
    assert "sending trial 0" in closed["error"] and "complex64" in closed["error"], closed
    assert closed["candidate_error"] == ""
    # The server goes on.
    reply, end = server.open(TASKS / "relu.py", ["5"])
    assert torch.equal(TrialData(end.detach()).inputs("trial", 0, "cpu")[0], fresh_inputs(TASKS / "relu.py", 5)[0])
    server.close(reply["id"])


def test_the_budget_keeps_recent_tasks_and_makes_the_rest_on_request():
    relu = fresh_inputs(TASKS / "relu.py", 1)[0]
    one_task = relu.numel() * relu.element_size() * 2
    s = Server("--budget-bytes", str(one_task))
    try:
        for task in ("relu.py", "relu.py", "softmax.py", "relu.py"):
            reply, end = s.open(TASKS / task, ["1", "2"])
            data = TrialData(end.detach())
            for k in (0, 1):
                assert torch.equal(data.inputs("trial", k, "cpu")[0], fresh_inputs(TASKS / task, k + 1)[0])
            s.close(reply["id"])
        stats = s.ask({"op": "stats"})
        assert stats["hits"] == 1 and stats["loads"] == 3 and stats["evictions"] == 2, stats
        assert stats["kept_bytes"] <= stats["budget_bytes"]
    finally:
        s.stop()
    s = Server("--budget-bytes", "1")
    try:
        for session in (1, 2):
            reply, end = s.open(TASKS / "relu.py", ["1", "2"])
            data = TrialData(end.detach())
            assert torch.equal(data.inputs("trial", 1, "cpu")[0], fresh_inputs(TASKS / "relu.py", 2)[0])
            s.close(reply["id"])
            stats = s.ask({"op": "stats"})
            # A task made on each request keeps nothing it made past its last session, but its module and model
            # (no weights: 0 bytes) stay: the next session (a verdict has three, with its two baselines) neither
            # imports the task nor builds its Model again.
            assert stats["made_on_request"] == session and stats["kept_bytes"] == 0 and stats["tasks"] == 1, stats
            assert stats["loads"] == 1 and stats["hits"] == session - 1 and stats["kept_unmade"] == session, stats
        # A reference whose weights do not fit the budget goes with its last session (relu went first, for room).
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        task = str(TASKS / "linear_relu.py")
        reply = s.ask({"op": "open", "task": task, "prepared": task, "seeds": ["1"], "compare": True},
                      [theirs.fileno()])
        theirs.close()
        assert reply.get("ok"), reply
        s.close(reply["id"])
        ours.close()
        stats = s.ask({"op": "stats"})
        assert stats["tasks"] == 0 and stats["kept_bytes"] == 0 and stats["loads"] == 2, stats
        assert stats["kept_unmade"] == 2 and stats["evictions"] == 1, stats
    finally:
        s.stop()


def test_exported_tensors_are_sealed_memfds_of_their_own_size():
    t = torch.arange(10, dtype=torch.float32)
    fd, kept = trial_channel.export(t, "x")
    assert kept is None  # A memfd needs nothing kept alive until it is sent.
    try:
        assert os.fstat(fd).st_size == 40
        seals = fcntl.fcntl(fd, fcntl.F_GET_SEALS)
        assert seals & fcntl.F_SEAL_SHRINK and seals & fcntl.F_SEAL_GROW and seals & fcntl.F_SEAL_SEAL
        with pytest.raises(PermissionError):
            os.ftruncate(fd, 4)
        with pytest.raises(PermissionError):
            os.ftruncate(fd, 4096)
        assert os.readlink(f"/proc/self/fd/{fd}").startswith("/memfd:anvil-x")
        back = trial_channel.map_tensor(os.dup(fd), "float32", [10])
        assert torch.equal(back, t)
    finally:
        os.close(fd)


def test_the_server_ends_with_its_control_socket():
    s = Server()
    assert s.stop() == 0


TOLERANCE = {"float32": [1e-4, 1e-4], "float64": [1e-6, 1e-6], "float16": [1e-2, 1e-2], "bfloat16": [1e-2, 1e-2]}


def open_comparing(server, task, seeds, **extra):
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    reply = server.ask(dict({"op": "open", "task": str(task), "prepared": str(task), "seeds": seeds, "compare": True,
                             "tolerance": TOLERANCE, "nan_equal": True}, **extra), [theirs.fileno()])
    theirs.close()
    assert reply.get("ok"), reply
    return reply["id"], TrialData(ours.detach())


def test_outputs_go_back_in_the_servers_buffers_and_are_compared_there(server):
    sid, data = open_comparing(server, TASKS / "relu.py", ["21", "22", "23"], atol_scale={"out0": 3.0})
    assert data.compares and data.trials == 3
    (x,) = data.inputs("trial", 0, "cpu")
    data.done(0, [torch.relu(x)])
    (x,) = data.inputs("trial", 1, "cpu")
    wrong = torch.relu(x)
    wrong[3, 5] += 1.0
    data.done(1, [wrong])
    (x,) = data.inputs("trial", 2, "cpu")
    data.done(2, [torch.relu(x)[:8]])  # The wrong shape: never copied, judged by the server.
    mid = server.ask({"op": "results", "session": sid})
    assert [r["trial"] for r in mid["results"]] == [0, 1, 2]
    report = server.close(sid)
    right, off, short = report["results"]
    assert right["problem"] == "" and right["outputs"][0]["ok"] and right["outputs"][0]["mismatches"] == 0
    assert right["outputs"][0]["atol"] == pytest.approx(3e-4) and right["outputs"][0]["elements"] == 16 * 1024
    assert off["problem"] == "values" and off["outputs"][0]["mismatches"] == 1
    assert off["outputs"][0]["first_mismatch_index"] == [3, 5]
    assert short["problem"].startswith("shape") and short["outputs"] == []
    assert report["after_return"] == [] and report["error"] == "" and report["candidate_error"] == ""


def test_the_reference_is_the_one_prepare_makes(server, tmp_path):
    """A forward that draws random numbers (dropout in training mode) draws the ones prepare's did: its outputs
    come right after its trial's inputs, from the same seed (as prepare computes them: task_worker.make_inputs,
    then the forward at once)."""
    task = tmp_path / "noisy.py"
    task.write_text("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
                    "        return torch.nn.functional.dropout(x, 0.5, training=True)\n"
                    "def get_inputs():\n    return [torch.randn(64)]\ndef get_init_inputs():\n    return []\n")
    from anvil_py.task_worker import make_inputs

    def prepared(seed):
        (x,) = make_inputs(lambda: [torch.randn(64)], seed, "cpu")
        return torch.nn.functional.dropout(x, 0.5, training=True)

    sid, data = open_comparing(server, task, ["5", "6"])
    for k, seed in ((0, 5), (1, 6)):
        data.inputs("trial", k, "cpu")
        data.done(k, [prepared(seed)])
    results = server.close(sid)["results"]
    assert [r["problem"] for r in results] == ["", ""], results
    # Another draw is told apart: the check is not vacuous.
    sid, data = open_comparing(server, task, ["5"])
    data.inputs("trial", 0, "cpu")
    data.done(0, [prepared(7)])
    assert server.close(sid)["results"][0]["problem"] != ""


LINEAR = ("import torch\nclass Model(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
          "        self.fc = torch.nn.Linear(32, 8)\n{extra}    def forward(self, x):\n        return self.fc(x)\n"
          "def get_inputs():\n    return [torch.randn(4, 32)]\ndef get_init_inputs():\n    return []\n")


def prepared_linear(tmp_path, extra=""):
    """(task, prepared folder) of a Linear task, prepared by the task worker."""
    task = tmp_path / "linear.py"
    task.write_text(LINEAR.format(extra=extra))
    out = tmp_path / "prepared"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    p = subprocess.run([sys.executable, "-m", "anvil_py.task_worker", "prepare", "--task", str(task), "--out",
                        str(out), "--seeds", "5"], capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    return task, out


def linear_weights(task, init_seed):
    """The task's Model as anvil builds a reference (its __init__ under `init_seed`): its state dict."""
    from anvil_py.task_worker import reference_model
    module = load_module(str(task), f"reference_{init_seed}_{time.monotonic_ns()}")
    return reference_model(module, "cpu", init_seed)[0].state_dict()


def open_linear(server, task, out):
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    reply = server.ask({"op": "open", "task": str(task), "prepared": str(out), "seeds": ["5"], "compare": True,
                        "init_seed": 42, "tolerance": TOLERANCE, "nan_equal": True}, [theirs.fileno()])
    theirs.close()
    assert reply.get("ok"), reply
    return reply["id"], TrialData(ours.detach())


@pytest.mark.parametrize("extra", [
    "",
    # Its __init__ computes on a weight.
    "        with torch.no_grad():\n            self.fc.weight.mul_(self.fc.weight.abs())\n"])
def test_the_reference_is_the_model_its_init_makes_under_the_init_seed(server, tmp_path, extra):
    """Prepare writes no weight: the server builds the reference as prepare does, its __init__ under the init
    seed. Another seed's weights are told apart (the check is not vacuous)."""
    task, out = prepared_linear(tmp_path, extra)
    assert sorted(p.name for p in out.iterdir()) == ["spec.json"]
    for init_seed, problem in ((42, False), (43, True)):
        weights = linear_weights(task, init_seed)
        sid, data = open_linear(server, task, out)
        (x,) = data.inputs("trial", 0, "cpu")
        data.done(0, [torch.nn.functional.linear(x, weights["fc.weight"], weights["fc.bias"])])
        (result,) = server.close(sid)["results"]
        assert bool(result["problem"]) == problem, (init_seed, result)


def test_an_output_changed_after_it_was_handed_over_is_after_return(server):
    import threading
    sid, data = open_comparing(server, TASKS / "relu.py", ["31"])
    (x,) = data.inputs("trial", 0, "cpu")
    buffer = data.buffers[("trial", 0)][0][1]
    buffer.copy_(torch.relu(x))
    stop = threading.Event()
    fills = [0]

    def scribble():
        while not stop.is_set():
            fills[0] += 1
            buffer.fill_(float(fills[0]))

    thread = threading.Thread(target=scribble)
    thread.start()
    try:
        trial_channel.send(data.sock, {"done": 0})
        reply, _ = trial_channel.receive(data.sock)
        # The server's copy was made before its reply; a fill after it is a change it must see when it reads the
        # buffer once more (at the close, at the latest).
        after = fills[0] + 2
        while fills[0] < after:
            time.sleep(0.001)
    finally:
        stop.set()
        thread.join()
    assert reply == {"compared": 0}
    report = server.close(sid)
    assert report["after_return"] and "changed in its buffer" in report["after_return"][0], report


@pytest.mark.parametrize("chunk", ["100", "1000000"])
def test_an_exported_buffer_is_compared_as_copied_chunk_by_chunk(monkeypatch, chunk):
    # The server compares copies of an output's chunks (a whole copy doubled a multi-GB output's memory): the same
    # statistics as comparing the whole, and the sampled elements' values as copied, for the second reading.
    monkeypatch.setattr(compare_torch, "_CHUNK_SET", chunk)
    want = torch.randn(37, 29)
    buffer = want.clone()
    buffer[20, 3] += 1.0
    buffer[30, 0] = float("nan")
    buffer[36, 28] = 1e-7 + want[36, 28]  # Within the tolerance.
    points = torch.tensor([0, 583, 870, 1072, 1072], dtype=torch.int64)
    got, kept = compare_torch.compare_copied(want, buffer, 1e-4, 1e-4, True, points)
    assert got == compare_torch.compare_tensors(want, buffer, 1e-4, 1e-4, True)
    assert got["mismatches"] == 2 and got["first_mismatch_index"] == [20, 3], got
    assert torch.equal(kept.view(torch.int32), buffer.reshape(-1)[points].view(torch.int32))  # NaN bits too.
    buffer.fill_(0.0)  # Changed after its comparison: the values kept are the copy's.
    assert not torch.equal(kept, buffer.reshape(-1)[points])


@pytest.mark.parametrize("message", [{"done": 1}, {"done": 0, "extra": 1}, {"done": "0"}])
def test_done_for_what_was_not_sent_ends_the_session(server, message):
    sid, data = open_comparing(server, TASKS / "relu.py", ["41", "42"])
    data.inputs("trial", 0, "cpu")
    trial_channel.send(data.sock, message)
    answer, _ = trial_channel.receive(data.sock)
    assert "error" in answer
    report = server.close(sid)
    assert report["candidate_error"] and report["results"] == []
    # A session that only serves inputs takes no outputs.
    reply, end = server.open(TASKS / "relu.py", ["3"])
    plain = TrialData(end.detach())
    plain.inputs("trial", 0, "cpu")
    trial_channel.send(plain.sock, {"done": 0})
    assert "error" in trial_channel.receive(plain.sock)[0]
    server.close(reply["id"])


# get_inputs() that takes its time between two draws: a session's comparison meanwhile must not draw from torch's
# generator (on an H100, timed sets made while another candidate's trials were compared came out other than their
# seeds make them, and honest candidates were judged perf.recheck).
SLOW_DRAWS = """
import time
import torch


class Model(torch.nn.Module):
    def forward(self, a, b):
        return a + b


def get_inputs():
    a = torch.randn(64)
    time.sleep(1.5)
    b = torch.randn(64)
    return [a, b]


def get_init_inputs():
    return []
"""


def test_a_comparison_beside_task_code_leaves_its_draws_alone(server, tmp_path):
    task = tmp_path / "slow_draws.py"
    task.write_text(SLOW_DRAWS)
    sid, data = open_comparing(server, TASKS / "relu.py", ["61"])
    (x,) = data.inputs("trial", 0, "cpu")
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    trial_channel.send(server.control, {"op": "open", "id": 999, "task": str(task), "prepared": str(task),
                                        "seeds": ["62"]}, [theirs.fileno()])
    theirs.close()
    time.sleep(0.5)  # The slow task's get_inputs() is asleep between its draws.
    data.done(0, [torch.relu(x)])  # Compared now, its sample drawn at random.
    reply, _ = trial_channel.receive(server.control)
    assert reply["id"] == 999 and reply.get("ok"), reply
    slow = TrialData(ours.detach())
    a, b = slow.inputs("trial", 0, "cpu")
    want_a, want_b = fresh_inputs(task, 62)
    assert torch.equal(a, want_a) and torch.equal(b, want_b)
    assert server.close(sid)["results"][0]["problem"] == ""


def test_the_timed_calls_get_fresh_copies_of_a_trials_inputs_once(server):
    sid, data = open_comparing(server, TASKS / "relu.py", ["51", "52"])
    (x,) = data.inputs("trial", 0, "cpu")
    x.fill_(0)  # The candidate's trial copy, spoiled.
    data.done(0, [x])
    (again,) = data.inputs("timing", 0, "cpu")
    assert torch.equal(again, fresh_inputs(TASKS / "relu.py", 51)[0])
    assert ("trial", 0) not in data.buffers  # Handed over: gone from the worker's side.
    with pytest.raises(ChannelError, match="sent already"):
        data.inputs("timing", 0, "cpu")
    assert "for the timed calls were sent already" in server.close(sid)["candidate_error"]


def open_with_sets(server, task, seeds, prepared, sets, **extra):
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    reply = server.ask(dict({"op": "open", "task": str(task), "prepared": str(prepared), "seeds": seeds, "sets": sets},
                            **extra), [theirs.fileno()])
    theirs.close()
    assert reply["ok"], reply
    return reply["id"], TrialData(ours.detach())


def test_a_timed_calls_set_is_written_into_its_own_buffers_only_when_anvil_says_so(server, tmp_path):
    # Timing sets as prepare leaves them: their seeds, from which the server makes them.
    timing_seeds = ["65", "66"]
    sets = [fresh_inputs(TASKS / "relu.py", int(seed))[0] for seed in timing_seeds]
    sid, data = open_with_sets(server, TASKS / "relu.py", ["61"], tmp_path, {"from": "timing", "count": 2,
                                                                             "write": True}, timing_seeds=timing_seeds)
    assert data.sets == 2 and data.sets_written
    # Nothing of a set is in the candidate's process until anvil's write: zeros.
    (first,) = data.call_inputs(0)
    assert torch.count_nonzero(first) == 0
    written = server.ask({"op": "write", "session": sid, "call": 0})
    assert written["ok"] is True, written
    assert torch.equal(first, sets[0])
    # Each call has buffers of its own, call k set k modulo the sets: call 2 has set 0 again, elsewhere.
    (second,) = data.call_inputs(1)
    (third,) = data.call_inputs(2)
    assert third.data_ptr() not in (first.data_ptr(), second.data_ptr()) and torch.count_nonzero(third) == 0
    assert server.ask({"op": "write", "session": sid, "call": 2})["ok"]
    assert torch.equal(third, sets[0])
    # Buffers of a call whose write has not come yet, or of an earlier call, are not written.
    assert "did not take" in server.ask({"op": "write", "session": sid, "call": 1})["candidate_error"]
    assert "did not take" in server.ask({"op": "write", "session": sid, "call": 7})["candidate_error"]
    assert server.ask({"op": "write", "session": 999, "call": 0})["error"] == "no such session"
    # A call's buffers once; copies of a set are not what this session serves.
    with pytest.raises(ChannelError, match="sent already"):
        data.call_inputs(2)
    assert "sent already" in server.close(sid)["candidate_error"]
    sid, data = open_with_sets(server, TASKS / "relu.py", ["61"], tmp_path, {"from": "timing", "count": 2,
                                                                             "write": True}, timing_seeds=timing_seeds)
    with pytest.raises(ChannelError, match="as buffers per call"):
        data.timed_set(0, "cpu")
    server.close(sid)


def test_without_write_the_sets_come_as_copies_of_the_trials(server):
    sid, data = open_with_sets(server, TASKS / "relu.py", ["71", "72"], TASKS / "relu.py",
                               {"from": "trials", "count": 2, "write": False})
    assert data.sets == 2 and not data.sets_written
    for k, seed in enumerate((71, 72)):
        (x,) = data.timed_set(k, "cpu")
        assert torch.equal(x, fresh_inputs(TASKS / "relu.py", seed)[0])
    with pytest.raises(ChannelError, match="does not exist"):
        data.timed_set(2, "cpu")
    assert server.close(sid)["error"] == ""


def test_rechecked_outputs_are_compared_by_the_server_at_the_points_of_anvils_seed(server, tmp_path):
    from anvil_py.timing import recheck_points, recheck_sample
    # Over 2^18 elements: a recheck compares 2^18 of them.
    task = tmp_path / "relu_large.py"
    task.write_text((TASKS / "relu.py").read_text().replace("batch_size = 16", "batch_size = 600").replace(
        "dim = 1024", "dim = 512"))
    timing_seeds = ["91", "92", "93", "94"]
    sets = [fresh_inputs(task, int(seed))[0] for seed in timing_seeds]
    assert sets[0].shape == (600, 512)

    def session():
        return open_comparing(server, task, ["81"], prepared=str(tmp_path),
                              sets={"from": "timing", "count": 4, "write": True}, timing_seeds=timing_seeds)

    # The worker may not ask before anvil has drawn the recheck (after the last timed call).
    sid, data = session()
    assert data.rechecks
    with pytest.raises(ChannelError, match="before anvil drew one"):
        data.recheck(0, [torch.relu(sets[0])])
    assert "before anvil drew one" in server.close(sid)["candidate_error"]

    seed = (1 << 63) + 5
    sid, data = session()
    reply = server.ask({"op": "recheck", "session": sid, "seed": seed, "sample": 2})
    assert reply["ok"] and reply["sets"] == recheck_sample(4, 2, seed)
    right, wrong = reply["sets"]

    def drawn(out, k):
        return out.reshape(-1)[torch.from_numpy(recheck_points(out.numel(), seed, k, 0))]

    data.recheck(right, [drawn(torch.relu(sets[right]), right)])
    data.recheck(wrong, [drawn(torch.relu(sets[wrong]) + 1.0, wrong)])
    report = server.close(sid)
    by_set = {r["trial"]: r for r in report["rechecks"]}
    assert by_set[right]["problem"] == "" and by_set[right]["outputs"][0]["elements"] == 1 << 18, by_set
    assert by_set[wrong]["problem"] == "values" and by_set[wrong]["outputs"][0]["mismatches"] == 1 << 18
    assert report["results"] == [] and report["error"] == ""

    # Only the sets anvil picked, each once.
    sid, data = session()
    server.ask({"op": "recheck", "session": sid, "seed": seed, "sample": 2})
    other = next(k for k in range(4) if k not in (right, wrong))
    with pytest.raises(ChannelError, match="not one anvil rechecks"):
        data.recheck(other, [drawn(torch.relu(sets[other]), other)])
    server.close(sid)


# A reference whose forward fails from its `works`-th call on (the trials' references come first).
FAILS_LATER = """import torch
calls = [0]
class Model(torch.nn.Module):
    def forward(self, x):
        calls[0] += 1
        if calls[0] > {works}:
            raise ValueError(f"call {{calls[0]}} of this reference fails")
        return torch.relu(x)
def get_inputs():
    return [torch.randn(8, 8)]
def get_init_inputs():
    return []
"""


def baseline(server, task, seeds, mode="eager", warmup=1, iters=5):
    """(set-up reply, time reply or None) of a baseline of `task`."""
    set_up = server.ask({"op": "baseline", "task": str(task), "prepared": str(task), "seeds": seeds, "mode": mode})
    if not set_up.get("ok"):
        return set_up, None
    return set_up, server.ask({"op": "baseline_time", "baseline": set_up["baseline"], "warmup": warmup,
                               "iters": iters})


def test_a_baseline_times_the_reference_the_server_keeps(server):
    set_up, timed = baseline(server, TASKS / "relu.py", ["71", "72"])
    assert set_up["ok"] and set_up["compile_seconds"] is None, set_up
    assert timed["ok"] and len(timed["times_ms"]) == 5 and all(t >= 0 for t in timed["times_ms"]), timed
    assert server.ask({"op": "stats"})["loads"] == 1
    # The comparing sessions of the task use the same reference, kept: no second load.
    sid, data = open_comparing(server, TASKS / "relu.py", ["71", "72"])
    (x,) = data.inputs("trial", 0, "cpu")
    assert torch.equal(x, fresh_inputs(TASKS / "relu.py", 71)[0])  # Trial 0 as its seed makes it.
    data.done(0, [torch.relu(x)])
    stats = server.ask({"op": "stats"})
    assert stats["loads"] == 1 and stats["hits"] == 1, stats
    assert server.close(sid)["results"][0]["problem"] == ""
    # Its time is asked once: the baseline is gone after it.
    again = server.ask({"op": "baseline_time", "baseline": set_up["baseline"], "warmup": 0, "iters": 1})
    assert "error" in again and "ok" not in again, again


def test_a_reference_that_fails_its_baseline_is_the_baselines_failure_not_the_servers(server, tmp_path):
    task = tmp_path / "fails_later.py"
    task.write_text(FAILS_LATER.format(works=2))  # The two trials' references, then no more.
    set_up, timed = baseline(server, task, ["1", "2"])
    assert set_up["ok"], set_up
    assert "call 3 of this reference fails" in timed["failed"] and "ok" not in timed, timed
    set_up, timed = baseline(server, TASKS / "relu.py", ["3"])  # The server goes on.
    assert timed["ok"], timed


@pytest.mark.parametrize("request_", [
    {"op": "baseline", "mode": "fast"},
    {"op": "baseline_time", "baseline": 12345, "warmup": 1, "iters": 3},
])
def test_a_baseline_request_the_server_cannot_take_is_an_error(server, request_):
    reply = server.ask(dict(request_, task=str(TASKS / "relu.py"), prepared=str(TASKS / "relu.py"), seeds=["1"]))
    assert "error" in reply and "ok" not in reply, reply
    assert server.ask({"op": "stats"})["loads"] == 0


def test_a_baseline_answers_its_own_request_while_others_come_in(server, tmp_path):
    # Its set-up runs on a thread of its own while the server reads the next requests: each reply keeps its id.
    task = tmp_path / "slow_init.py"
    task.write_text(SLOW_DRAWS)
    trial_channel.send(server.control, {"op": "baseline", "id": 501, "task": str(task), "prepared": str(task),
                                        "seeds": ["1"], "mode": "eager"})
    trial_channel.send(server.control, {"op": "stats", "id": 502})
    trial_channel.send(server.control, {"op": "baseline", "id": 503, "task": str(TASKS / "relu.py"),
                                        "prepared": str(TASKS / "relu.py"), "seeds": ["2"], "mode": "eager"})
    replies = {}
    while len(replies) < 3:
        reply, _ = trial_channel.receive(server.control)
        replies[reply["id"]] = reply
    assert set(replies) == {501, 502, 503}
    assert replies[501]["ok"] and replies[503]["ok"] and replies[501]["baseline"] != replies[503]["baseline"], replies
    assert "loads" in replies[502]
    for k in (501, 503):
        timed = server.ask({"op": "baseline_time", "baseline": replies[k]["baseline"], "warmup": 0, "iters": 2})
        assert timed["ok"] and len(timed["times_ms"]) == 2, timed


SLOW_INPUTS = """
import time
import torch


class Model(torch.nn.Module):
    def forward(self, x):
        return x * 2


def get_inputs():
    open({marker!r}, "w").close()
    time.sleep(2)
    return [torch.randn(16)]


def get_init_inputs():
    return []
"""


def test_a_request_behind_another_tasks_code_says_how_long_it_waited(server, tmp_path):
    # Task code runs one call at a time: a session and a baseline asked while another task's inputs are made (2 s)
    # wait for them, and say how long (anvil counts it as a queue, other verdicts' time: server_wait_seconds).
    marker = tmp_path / "making"
    slow = tmp_path / "slow_inputs.py"
    slow.write_text(SLOW_INPUTS.format(marker=str(marker)))
    relu = str(TASKS / "relu.py")
    trial_channel.send(server.control, {"op": "baseline", "id": 701, "task": str(slow), "prepared": str(slow),
                                        "seeds": ["1"], "mode": "eager"})
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert time.monotonic() < deadline, "the slow task's inputs were never made"
        time.sleep(0.01)
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    trial_channel.send(server.control, {"op": "open", "id": 702, "task": relu, "prepared": relu, "seeds": ["5"]},
                       [theirs.fileno()])
    theirs.close()
    trial_channel.send(server.control, {"op": "baseline", "id": 703, "task": relu, "prepared": relu, "seeds": ["5"],
                                        "mode": "eager"})
    replies = {}
    while len(replies) < 3:
        reply, _ = trial_channel.receive(server.control)
        replies[reply["id"]] = reply
    assert all(r.get("ok") for r in replies.values()), replies
    assert replies[701]["phases_ms"]["wait"] < 500, replies[701]  # It ran first: no wait.
    assert replies[703]["phases_ms"]["wait"] >= 1500, replies[703]
    # The set-up's other phases leave the wait out: they add up to less than the wait alone.
    assert sum(v for k, v in replies[703]["phases_ms"].items() if k != "wait") < 1000, replies[703]
    closed = server.close(702)
    assert closed["waited_ms"] >= 1500 and closed["error"] == "", closed
    for k in (701, 703):  # Timed alone: no wait.
        timed = server.ask({"op": "baseline_time", "baseline": replies[k]["baseline"], "warmup": 0, "iters": 2})
        assert timed["ok"] and timed["phases_ms"]["wait"] < 500, timed
    # The task kept, nothing else running: the next session does not wait.
    reply, data = server.open(TASKS / "relu.py", ["5"])
    assert reply.get("ok"), reply
    data.close()
    assert server.close(reply["id"])["waited_ms"] < 500


NOT_COMPILED = """import torch
import torch.nn as nn
class Model(nn.Module):
    @torch._dynamo.disable
    def forward(self, x):
        return torch.relu(x)
def get_inputs():
    return [torch.randn(8, 8)]
def get_init_inputs():
    return []
"""


def test_a_compile_baseline_says_how_many_graphs_dynamo_compiled(server, tmp_path):
    set_up, timed = baseline(server, TASKS / "relu.py", ["81"], mode="compile")
    assert set_up["ok"] and set_up["compile_seconds"] > 0 and set_up["compile_graphs"] == 1, set_up
    assert timed["ok"], timed
    # The same kept reference compiled again, on another thread after the first baseline's dynamo reset (which
    # killed the server with SIGSEGV when the two ran on different threads): compiled anew.
    set_up, timed = baseline(server, TASKS / "relu.py", ["81"], mode="compile")
    assert set_up["ok"] and set_up["compile_graphs"] == 1, set_up
    assert timed["ok"], timed
    # A forward dynamo must not trace: torch.compile runs it eagerly, and says so by its count.
    task = tmp_path / "not_compiled.py"
    task.write_text(NOT_COMPILED)
    set_up, timed = baseline(server, task, ["82"], mode="compile")
    assert set_up["ok"] and set_up["compile_graphs"] == 0, set_up
    assert timed["ok"], timed
    set_up, _ = baseline(server, task, ["82"])
    assert set_up["ok"] and set_up["compile_graphs"] is None, set_up  # Eager: nothing to say.


SLOW_COMPILE = """import torch
import torch.nn as nn
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(16, 16) for _ in range(12)])
    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            x = torch.tanh(x) * (i + 1) if i % 2 else torch.sigmoid(x) + i
            x = x.softmax(-1) if i % 3 == 0 else x
        return x
def get_inputs():
    return [torch.randn(8, 16)]
def get_init_inputs():
    return []
"""


def test_a_compile_lends_task_code_to_other_tasks_trials_while_inductor_compiles(tmp_path):
    # A level-3 reference's compile held task code for 100 s on the H100 while every other verdict's trials waited
    # (bench/results/all_problems_h100_call8.md). While inductor compiles, tasks are loaded and trials made beside it,
    # as their seeds make them; code with other TF32 switches (inductor reads them) still waits for the compile.
    slow = tmp_path / "slow_compile.py"
    slow.write_text(SLOW_COMPILE)
    server = Server(env={"TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "inductor")})  # Compiled anew, not from a cache.
    try:
        trial_channel.send(server.control, {"op": "baseline", "id": 801, "task": str(slow), "prepared": str(slow),
                                            "seeds": ["3"], "mode": "compile"})
        replies, at = {}, {}

        def receive():
            reply, _ = trial_channel.receive(server.control)
            replies[reply["id"]] = reply
            at[reply["id"]] = time.monotonic()

        deadline, ask = time.monotonic() + 240, 900
        while 801 not in replies:  # Until inductor compiles, task code lent.
            assert time.monotonic() < deadline, "the compile never lent task code"
            ask += 1
            trial_channel.send(server.control, {"op": "stats", "id": ask})
            while ask not in replies:
                receive()
            if replies[ask].get("lends", 0) >= 1:
                break
            time.sleep(0.05)
        assert 801 not in replies, "the compile ended before the test could see it lend task code"
        ends = {}
        for rid, task, tf32 in ((802, TASKS / "relu.py", "off"), (803, TASKS / "softmax.py", "default")):
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            trial_channel.send(server.control, {"op": "open", "id": rid, "task": str(task), "prepared": str(task),
                                                "seeds": ["5"], "tf32": tf32}, [theirs.fileno()])
            theirs.close()
            ends[rid] = ours
        while not {801, 802, 803} <= set(replies):
            receive()
        assert all(replies[r].get("ok") for r in (801, 802, 803)), replies
        # The same switches beside the compile (seconds before it ends); other switches once it ended (its answer
        # and theirs then race).
        assert at[802] < at[801] - 1.0 < at[803], at
        (x,) = TrialData(ends[802].detach()).inputs("trial", 0, "cpu")
        assert torch.equal(x, fresh_inputs(TASKS / "relu.py", 5)[0])
        assert server.close(802)["waited_ms"] < 1000
        assert server.close(803)["waited_ms"] >= 500
        assert replies[801]["compile_graphs"] >= 1, replies[801]
        timed = server.ask({"op": "baseline_time", "baseline": replies[801]["baseline"], "warmup": 0, "iters": 2})
        assert timed["ok"] and len(timed["times_ms"]) == 2, timed
    finally:
        server.stop()


def test_a_server_told_to_warm_the_compiler_imports_it_before_the_first_compile_baseline():
    # The run's first compile baseline paid torch.compile's imports in its `dynamo` phase (3.4-6.3 s on the H100
    # host); a server on a GPU imports them at its start, in the background (--warm-compiler on: here, on the CPU).
    warm = Server("--warm-compiler", "on")
    try:
        deadline = time.monotonic() + 120
        while not warm.ask({"op": "stats"})["compiler_imported"]:
            assert time.monotonic() < deadline, "the compiler's modules were never imported"
            time.sleep(0.1)
        set_up, timed = baseline(warm, TASKS / "relu.py", ["81"], mode="compile")
        assert set_up["ok"] and timed["ok"], (set_up, timed)
        warmed = set_up["phases_ms"]["dynamo"]
    finally:
        warm.stop()
    cold = Server()  # On the CPU the default is not to.
    try:
        assert cold.ask({"op": "stats"})["compiler_imported"] is False
        set_up, timed = baseline(cold, TASKS / "relu.py", ["81"], mode="compile")
        assert set_up["ok"] and timed["ok"], (set_up, timed)
        assert warmed < 0.5 * set_up["phases_ms"]["dynamo"], (warmed, set_up["phases_ms"])
    finally:
        cold.stop()


def test_weights_travel_packed_in_one_buffer_and_come_back_by_name():
    """send_weights/receive_weights: every weight in one sealed memfd at an aligned offset, by name, with the state
    dict's names apart (a buffer that is not persistent travels too, for native candidates)."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    weights = [("a.weight", torch.randn(3, 5), True), ("a.bias", torch.arange(3, dtype=torch.float16), True),
               ("steps", torch.tensor(7, dtype=torch.int64), True), ("empty", torch.empty(0, 4), True),
               ("scratch", torch.ones(2, dtype=torch.bool), False)]
    trial_channel.send_weights(ours, weights)
    got, state = trial_channel.receive_weights(theirs)
    assert state == ["a.weight", "a.bias", "steps", "empty"]
    assert list(got) == [n for n, _, _ in weights]
    for name, tensor, _ in weights:
        assert got[name].dtype == tensor.dtype and got[name].shape == tensor.shape, name
        assert torch.equal(got[name], tensor), name
        if tensor.numel():
            assert got[name].data_ptr() % 256 == 0, name  # Aligned for any dtype and for the GPU.
    got["a.weight"].mul_(2)  # The receiver's own copy: writable, and the sender's tensor is untouched.
    assert not torch.equal(got["a.weight"], weights[0][1])
    ours.close()
    theirs.close()


def test_weights_of_a_model_with_thousands_of_tensors_travel_too():
    """The layout of level 3's DenseNet201 (619 tensors, 76 KB of JSON) was over the channel's 64 KiB message: the
    server failed sending the weights of ResNet101 and DenseNet201 on the H100. The layout travels in a sealed memfd
    of its own beside the buffer, whatever its size."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    weights = [(f"features.denseblock{i // 100}.denselayer{i % 100}.conv{i}.weight", torch.full((2, 3), float(i)),
                i % 7 != 0) for i in range(5000)]
    trial_channel.send_weights(ours, weights)
    got, state = trial_channel.receive_weights(theirs)
    assert list(got) == [n for n, _, _ in weights]
    assert state == [n for n, _, in_state in weights if in_state]
    assert all(torch.equal(got[n], t) for n, t, _ in weights)
    ours.close()
    theirs.close()


def test_weights_are_written_straight_into_the_buffer_sent():
    """send_weights keeps one copy of the weights beside the model's own: the sent buffer, written in place (a
    packed copy made first and exported after doubled it: GBs for level 3's models)."""
    code = """
import resource, socket, torch
from anvil_py import trial_channel
weight = torch.ones(64 << 20)  # 256 MiB
ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
mapping = trial_channel.send_weights(ours, [("w", weight, True)])
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) >> 10)
"""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHONPATH=str(Path(trial_channel.__file__).parents[1])))
    assert run.returncode == 0, run.stderr[-2000:]
    grown_mib = int(run.stdout.split()[-1])
    assert 200 <= grown_mib < 384, grown_mib


def test_a_comparing_session_sends_the_references_weights_once(server, tmp_path):
    """The candidate gets the reference's weights from the server (the values it compares against), without reading
    the prepared folder, which holds none."""
    task, out = prepared_linear(tmp_path)
    sid, data = open_linear(server, task, out)
    assert data.offers_weights
    weights, names = data.weights("cpu")
    assert names == ["fc.weight", "fc.bias"]
    want = linear_weights(task, 42)
    assert torch.equal(weights["fc.weight"], want["fc.weight"]) and torch.equal(weights["fc.bias"], want["fc.bias"])
    (x,) = data.inputs("trial", 0, "cpu")
    data.done(0, [torch.nn.functional.linear(x, weights["fc.weight"], weights["fc.bias"])])
    # Twice is a request anvil does not know: the session ends, the candidate's doing.
    trial_channel.send(data.sock, {"get": "weights", "k": 0})
    message, _ = trial_channel.receive(data.sock)
    assert "asked for already" in message.get("error", ""), message
    report = server.close(sid)
    assert report["results"][0]["problem"] == "", report


def test_a_task_loaded_while_sessions_hold_the_budget_is_made_on_request(monkeypatch):
    # On a GPU the sessions' memory (trials made on request, exported buffers) counts against the budget beside the
    # kept tasks (Tasks.in_use_bytes, 0 on the CPU): a task loaded while a multi-GB session runs must not take what
    # that session and its candidate need. Here a session holding most of the budget is simulated.
    from anvil_py.task_store import Tasks  # noqa: PLC0415

    relu = fresh_inputs(TASKS / "relu.py", 1)[0]
    one_task = relu.numel() * relu.element_size() * 2
    tasks = Tasks(torch.device("cpu"), 2 * one_task)

    def load(name):
        task = str(TASKS / name)
        entry = tasks.acquire({"task": task, "prepared": task, "seeds": ["1", "2"]})
        tasks.release(entry)
        return entry

    assert load("relu.py").trials is not None and tasks.kept_bytes() == one_task
    in_use = {"bytes": 2 * one_task}
    monkeypatch.setattr(tasks, "in_use_bytes", lambda: in_use["bytes"])
    softmax = load("softmax.py")
    assert softmax.trials is None, "kept beside a session that holds the budget"
    assert tasks.counts["evictions"] == 1 and tasks.kept_bytes() == 0, tasks.counts  # relu went first, in vain.
    in_use["bytes"] = 0
    assert load("relu.py").trials is not None and tasks.kept_bytes() == one_task
    stats = tasks.stats()
    assert stats["in_use_bytes"] == 0 and stats["kept_bytes"] <= stats["budget_bytes"], stats


def test_a_buffer_the_device_refused_is_asked_for_again_after_the_server_makes_room(monkeypatch):
    # On a GPU the candidate, a preparation beside it and the server share the device: a cuMemCreate refused for
    # memory is tried again after the server gives back what no session uses, for a while, before it is anvil's
    # infra_error (a retry on an idle device, minutes).
    from anvil_py import device_buffers, task_server  # noqa: PLC0415

    refused = device_buffers.DeviceBufferError("cuMemCreate failed: out of memory (2)")
    attempts, rooms = [], []

    def send(sock, value, refusals):
        attempts.append(value)
        if len(attempts) <= refusals:
            raise refused
        return "sent"

    session = task_server._Session(1, None, {}, torch.device("cpu"))
    session.room = lambda: rooms.append(len(attempts))
    assert task_server._send(session, "trial 0", send, "x", 2) == "sent"
    assert rooms == [1, 2] and session.error == ""

    monkeypatch.setattr(task_server, "ROOM_WAIT_SECONDS", 0.3)
    attempts.clear()
    session.holdings = lambda: "the task server held 3 MiB"  # Tasks.holdings: what it held, piece by piece.
    assert task_server._send(session, "trial 1", send, "x", 100) is task_server._SENT_NOTHING
    assert 2 <= len(attempts) <= 5, attempts
    assert session.error == ("sending trial 1: DeviceBufferError: cuMemCreate failed: out of memory (2) (the task "
                             "server held 3 MiB)")

    other = task_server._Session(2, None, {}, torch.device("cpu"))
    other.room = lambda: rooms.append("other")
    attempts.clear()
    rooms.clear()

    def broken(sock):
        attempts.append(1)
        raise device_buffers.DeviceBufferError("cuMemCreate failed: invalid value (1)")

    other.holdings = lambda: "the task server held 3 MiB"
    assert task_server._send(other, "trial 0", broken) is task_server._SENT_NOTHING
    assert attempts == [1] and rooms == [] and "invalid value" in other.error
    assert "held" not in other.error  # Not a refusal for memory: nothing about it.


def test_giving_memory_back_looks_for_garbage_cycles_only_when_memory_is_unexplained(monkeypatch):
    # A full collection takes 0.1-0.2 s once torch.compile ran in the server, and a verdict gives memory back after
    # each of its sessions and baselines: the server collects only when torch holds more than its kept tasks, or
    # buffers stay exported while nothing runs (tests/gpu/test_gpu_trial_buffers.py frees a real cycle).
    from anvil_py import device_buffers, task_store  # noqa: PLC0415

    device = {"allocated": 0, "exported": 0, "emptied": 0, "collected": 0}
    monkeypatch.setattr(task_store.torch.cuda, "memory_allocated", lambda d=None: device["allocated"])
    monkeypatch.setattr(task_store.torch.cuda, "empty_cache", lambda: device.update(emptied=device["emptied"] + 1))
    monkeypatch.setattr(device_buffers, "exported_bytes", lambda: device["exported"])
    monkeypatch.setattr(task_store.gc, "collect", lambda: device.update(collected=device["collected"] + 1))
    monkeypatch.setattr(task_store.gc, "freeze", lambda: None)
    monkeypatch.setattr(task_store.gc, "unfreeze", lambda: None)
    tasks = task_store.Tasks(torch.device("cuda"), 1 << 40)
    entry = task_store._Entry("relu", {"task": "relu.py", "prepared": "p", "seeds": ["1"]})
    entry.trials, entry.bytes = [], 1 << 30
    tasks.entries["relu"] = entry

    device["allocated"] = (1 << 30) + (1 << 20)  # The kept task, and torch's rounding.
    tasks.give_back_memory()
    assert device["collected"] == 0 and device["emptied"] == 1, device
    device["allocated"] += task_store.COLLECT_ABOVE
    tasks.give_back_memory()
    assert device["collected"] == 1 and tasks.stats()["collections"] == 1, device
    device["allocated"], device["exported"] = 1 << 30, 2 * task_store.COLLECT_ABOVE
    entry.users = 1  # A session maps its buffers.
    tasks.give_back_memory()
    assert device["collected"] == 1, device
    entry.users = 0  # Exported, with nothing running: held by garbage.
    tasks.give_back_memory()
    assert device["collected"] == 2 and device["emptied"] == 4, device


def test_a_collection_walks_only_what_is_new_unless_a_task_went_or_memory_grew(monkeypatch):
    # After torch.compile a full collection walks ~270,000 objects (0.12-0.2 s); frozen, the walk takes a millisecond
    # (bench/results/all_problems_h100_call8.md). What survives a collection while nothing runs is frozen; a task
    # dropped since, or memory held beyond the last full collection's level, thaws them for the next one.
    from anvil_py import device_buffers, task_store  # noqa: PLC0415

    calls = []
    device = {"allocated": 0}
    monkeypatch.setattr(task_store.torch.cuda, "memory_allocated", lambda d=None: device["allocated"])
    monkeypatch.setattr(task_store.torch.cuda, "empty_cache", lambda: None)
    monkeypatch.setattr(device_buffers, "exported_bytes", lambda: 0)
    for name in ("collect", "freeze", "unfreeze"):
        monkeypatch.setattr(task_store.gc, name, lambda name=name: calls.append(name))
    tasks = task_store.Tasks(torch.device("cuda"), 1 << 40)
    kept = task_store._Entry("relu", {"task": "relu.py", "prepared": "p", "seeds": ["1"]})
    kept.trials, kept.bytes = [], 1 << 30
    tasks.entries["relu"] = kept
    held = 2 * task_store.COLLECT_ABOVE  # Beyond the kept task, and no collection frees it (a workspace of torch's).
    device["allocated"] = (1 << 30) + held

    def give_back():
        calls.clear()
        tasks.give_back_memory()
        return list(calls)

    # The first finds memory it cannot explain: the next one walks everything, and settles there.
    assert give_back() == ["collect", "freeze"]
    assert give_back() == ["unfreeze", "collect", "freeze"]
    assert tasks.stats()["full_collections"] == 1
    # Then each walks only the objects made since, and freezes them again.
    assert give_back() == ["collect", "freeze"]
    assert give_back() == ["collect", "freeze"]
    kept.users = 1  # A session runs: its objects are not frozen.
    assert give_back() == ["collect"]
    kept.users = 0
    assert give_back() == ["collect", "freeze"]
    # Memory grows beyond the settled level and a walk of the new objects does not free it: all of them next time.
    device["allocated"] += 2 * task_store.COLLECT_ABOVE
    assert give_back() == ["collect", "freeze"]
    assert give_back() == ["unfreeze", "collect", "freeze"]
    assert give_back() == ["collect", "freeze"]
    # A task dropped: its objects may be frozen garbage now.
    other = task_store._Entry("other", {"task": "other.py", "prepared": "q", "seeds": ["1"]})
    tasks.entries["other"] = other
    with tasks.lock:
        tasks._forget_unused(kept)
    assert "other" not in tasks.entries
    assert give_back() == ["unfreeze", "collect", "freeze"]
    assert give_back() == ["collect", "freeze"]
    assert tasks.stats()["full_collections"] == 3 and tasks.stats()["collections"] == 11


def test_the_server_is_named_so_messages_about_the_devices_memory_can_name_it(server):
    # anvil names who held the device when a candidate's device ran out (docs/verdict.md): the server's share
    # beyond its budget reads "pid N (anvil-tasks) held ...", not "python3".
    assert Path(f"/proc/{server.proc.pid}/comm").read_text() == "anvil-tasks\n"


def test_a_baseline_copies_a_kept_trials_inputs_and_takes_inputs_made_for_it_as_they_are():
    # A reference that writes into its inputs must leave a kept trial alone: the baseline times a copy. Inputs made
    # on request (a multi-GB task over the budget) are the baseline's own: a second copy would double its memory.
    from anvil_py.task_server import _Baseline
    from anvil_py.task_store import Tasks  # noqa: PLC0415

    task = str(TASKS / "relu.py")
    request = {"task": task, "prepared": task, "seeds": ["1", "2"], "compare": True}
    for budget, kept in ((1 << 30, True), (1, False)):
        tasks = Tasks(torch.device("cpu"), budget)
        entry = tasks.acquire(request)
        assert (entry.trials is not None) == kept
        made = []
        trial = tasks.trial
        tasks.trial = lambda e, k, reference=True: made.append(trial(e, k, reference)) or made[-1]
        baseline = _Baseline(entry, "eager")
        baseline.set_up(tasks)
        given = made[0][0][0]
        assert torch.equal(baseline.inputs[0], given)
        assert (baseline.inputs[0].data_ptr() != given.data_ptr()) == kept, f"budget {budget}"
        tasks.release(entry)
