"""The task server (docs/protocol.md, "trial data"): the trusted side that hands a candidate its trial inputs.

anvil starts one per device, as its child, and talks to it on a socket pair it inherits (--control-fd); it ends
when that socket closes. For each candidate run anvil opens a session: it sends the task, its secret trial seeds
and one end of a new socket pair whose other end the candidate worker inherits. The server makes the task's
inputs from the seeds (on the device, in trusted code, never from files), keeps them for the next candidate of the
same task within a memory budget (least recently used tasks go first), and answers the candidate's requests on its
end: each trial's inputs, once, as copies in sealed memfds of their own. It listens on no address: the only way in
is a descriptor anvil handed out. The tasks it keeps, and its memory, are anvil_py/task_store.py's.
"""

import argparse
import ctypes
import gc
import itertools
import os
import socket
import sys
import threading
import time

import torch

from anvil_py import device_buffers, tensor_io, trial_channel
from anvil_py.task_loader import TaskError
from anvil_py.compare_torch import compare_copied
from anvil_py.compare_torch import json_number
from anvil_py.device_work import WorkClock
from anvil_py.task_store import SESSION_MARGIN, SESSION_ROOM, Tasks, default_budget
from anvil_py.task_worker import compile_first_call, set_tf32
from anvil_py.timing import Timer, recheck_points, recheck_sample
from anvil_py.trial_channel import ChannelClosed, ChannelError


# Timed calls a session may take buffers for.
MAX_CALLS = 1 << 20
# Elements of each output re-read from the exported buffer after its comparison (a change: run.after_return).
RECHECK_SAMPLE = 64
# A trial made on request from this many bytes on: torch's cached copy of its inputs goes back to the device once
# they are sent (a multi-GB session's candidate needs the room beside the server's buffers).
LARGE_TRIAL = 256 << 20
_SAME_SIZE_INTS = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
# Fields of a comparison that may be NaN or infinite: sent as text ("nan", "inf", "-inf"), which JSON can hold.
_FLOAT_FIELDS = ("expected_at_first", "actual_at_first", "max_abs_error", "max_rel_error", "mean_abs_error")


class _Session:
    def __init__(self, sid, sock, request, device):
        self.id, self.sock, self.request = sid, sock, request
        self.work = WorkClock(device)  # The device's work for this session (the close's "work_ms").
        self.generators = {}  # Device -> the session's own generator (draws()).
        self.served = []
        self.error = ""          # The server's own failure: anvil's, never the candidate's.
        self.candidate_error = ""  # The candidate broke the protocol.
        self.results = {}        # Trial -> its comparison (sessions that compare).
        self.held_results = {}   # Held-out set -> its comparison.
        self.held_out = int(request.get("held_out", 0)) if request.get("compare") else 0  # Held-out sets it serves.
        self.held_sent = []
        self.weights = []          # The reference's weights it offers (_weights_of), from its hello on.
        self.weights_sent = False  # Those weights, once asked for.
        self.after_return = []   # Outputs that changed in their exported buffer after `done`.
        self.buffers = {}        # ("trial" | "held_out", k) -> [(name, mapped buffer)] sent, not yet compared.
        self.timing = []         # Trials whose inputs went again, for the timed calls.
        self.made = {}           # Trial -> the reference's outputs made for it (a task over the budget).
        # The timed calls' input sets: what anvil asked for ({"from", "count", "write"}) and those sent; where the
        # server writes each call's set after the worker's `ready`, the timed calls whose buffers went out and the
        # last one's buffers {call: [(mapping, the set's value)]}.
        self.sets_spec = request.get("sets") or {"from": "trials", "count": 0, "write": False}
        self.sets_sent = []
        # After the timed calls, anvil's recheck (docs/protocol.md, "rechecks"): the sets it picked, by the seed it
        # drew then, each with the flat indices of each output compared (None: all); and their comparisons.
        self.rechecks = request.get("compare", False) and self.sets_spec["count"] > 0
        self.recheck_seed = None
        self.recheck_sets = []
        self.recheck_sent = {}
        self.recheck_results = {}
        self.calls_sent = set()
        self.calls = {}
        # The last compared trial's buffers, with the elements drawn from the private copy, read once more when the
        # candidate hands over its next outputs (so after a whole call of its code) or when the session closes, then
        # released: (trial, [(name, buffer, points, values)]).
        self.recheck = None
        self.room = None  # Gives back what the server holds that no session uses (_send, a buffer refused).
        self.holdings = None  # What the server holds on its device, in words (the message of a buffer refused).
        self.lock = threading.Lock()
        self.thread = None
        self.waited_ms = 0.0  # What its thread waited for task code another thread ran (the close's "waited_ms").

    def draws(self, device):
        """The session's own generator on `device`, seeded at random: torch's default one is the task code's, whose
        inputs come from their seeds (Tasks.task_code), and a comparison beside it must not move it."""
        key = str(device)
        if key not in self.generators:
            self.generators[key] = torch.Generator(device=device)
            self.generators[key].manual_seed(int.from_bytes(os.urandom(8), "little") >> 1)
        return self.generators[key]

    def report(self):
        with self.lock:
            return {"served": list(self.served), "error": self.error, "candidate_error": self.candidate_error,
                    "results": [dict(self.results[k], trial=k) for k in sorted(self.results)],
                    "held_out": [dict(self.held_results[k], trial=k) for k in sorted(self.held_results)],
                    "rechecks": [dict(self.recheck_results[k], trial=k) for k in sorted(self.recheck_results)],
                    "after_return": list(self.after_return)}


_SENT_NOTHING = object()


def _make_failed(session, what, e, detail=""):
    """The server's own failure making `what`: the session's error (anvil's; the candidate is told at the end of
    the session's answers)."""
    with session.lock:
        session.error = session.error or f"{what}: {type(e).__name__}: {e}" + (f" ({detail})" if detail else "")


# A buffer the device refused the server (cuMemCreate out of memory: the candidate, a preparation beside it and the
# server share the device) is asked for again once the server has given back what no session uses, for at most this
# many seconds in all while other processes let go, before it is the session's error (anvil's infra_error, a retry
# on an idle device that costs minutes).
ROOM_WAIT_SECONDS = 20.0


def _out_of_device_memory(e):
    return isinstance(e, device_buffers.DeviceBufferError) and "out of memory" in str(e)


def _send(session, what, send, *args):
    """send(session.sock, *args)'s result, or _SENT_NOTHING when the candidate went away (EPIPE, ECONNRESET) or the
    send failed (the session's error then, naming `what`). Nothing goes before every buffer is made, so a buffer
    the device refused is asked for again after session.room() (ROOM_WAIT_SECONDS)."""
    waited, pause = 0.0, 0.1
    while True:
        try:
            return send(session.sock, *args)
        except OSError as e:
            if e.errno not in (32, 104):
                _make_failed(session, f"sending {what}", e)
            return _SENT_NOTHING
        except BaseException as e:  # noqa: BLE001 - a message the channel cannot take, a buffer the device cannot give
            if _out_of_device_memory(e) and session.room is not None and waited < ROOM_WAIT_SECONDS:
                session.room()
                time.sleep(pause)
                waited += pause
                pause = min(2 * pause, 2.0)
                continue
            # Refused for memory: what the server itself held then, piece by piece, goes with the message.
            held = session.holdings() if _out_of_device_memory(e) and session.holdings is not None else ""
            _make_failed(session, f"sending {what}", e, held)
            return _SENT_NOTHING


def _weights_of(model):
    """The reference's weights as the candidate gets them (trial_channel.send_weights): its state dict, then the
    parameters and buffers it leaves out (a buffer that is not persistent), each [name, tensor, in the state dict];
    [] for a reference with none (or no module)."""
    if not isinstance(model, torch.nn.Module):
        return []
    state = model.state_dict()
    weights = [(n, t, True) for n, t in state.items()]
    weights += [(n, t, False) for n, t in list(model.named_parameters()) + list(model.named_buffers())
                if n not in state]
    return weights


def _send_inputs(session, what, inputs, expected=None):
    """A set's inputs and, for each of the reference's `expected` outputs, a buffer of its shape (send_tensors):
    this side's mappings of the buffers, or _SENT_NOTHING."""
    named = [(f"in{i}", v) for i, v in enumerate(inputs)]
    outputs = [(f"out{i}", o.dtype, list(o.shape), o.device) for i, o in enumerate(expected or [])]
    return _send(session, what, trial_channel.send_tensors, named, outputs)


def _what(kind, k):
    return {"held_out": f"held-out set {k}", "recheck": f"the recheck of timed set {k}"}.get(kind, f"trial {k}")


def _tolerance(request, name, dtype):
    """(atol, rtol, nan_equal) of an output: anvil's per-dtype table, its atol scaled by the trivial guard."""
    atol, rtol = request.get("tolerance", {}).get(tensor_io.dtype_name(dtype), [0.0, 0.0])
    atol *= request.get("atol_scale", {}).get(name, 1.0)
    return float(atol), float(rtol), bool(request.get("nan_equal", True))


def _bits(values):
    """Elements as integers of their size: NaNs compare by their bits."""
    return values if values.dtype == torch.bool else values.view(_SAME_SIZE_INTS[values.element_size()])


def _changed(buffer, points, values):
    """Whether the exported buffer's elements at `points` differ, bit for bit, from `values` (the private copy's)."""
    return not torch.equal(_bits(buffer.reshape(-1)[points]), _bits(values))


def _read_again(session, what, drawn):
    """Reads `what`'s ("trial 3") drawn elements of each buffer once more: a change since the private copy is
    after_return. Returns whether it found one."""
    changed = [name for name, buffer, points, values in drawn if _changed(buffer, points, values)]
    with session.lock:
        session.after_return += [f"{what}: {name} changed in its buffer after the worker handed it over"
                                 for name in changed]
    return bool(changed)


def _recheck(session):
    """The last compared trial's second reading (at the candidate's next `done` or the close), after which its
    buffers go."""
    if session.recheck is not None:
        _read_again(session, *session.recheck)
        session.recheck = None


class Server:
    def __init__(self, control, device, budget):
        self.control = control
        self.device = device
        self.tasks = Tasks(device, budget)
        self.send_lock = threading.Lock()
        self.sessions = {}
        self.baselines = {}  # Baseline id -> _Baseline, set up and waiting for its timed calls.
        self.baseline_ids = itertools.count(1)

    def reply(self, message):
        with self.send_lock:
            trial_channel.send(self.control, message)

    def serve(self):
        while True:
            try:
                request, fds = trial_channel.receive(self.control, 1)
            except ChannelError:
                return  # anvil has ended.
            op = request.get("op")
            if op == "open" and len(fds) == 1:
                self.open(request, fds[0])
            elif op == "close":
                # Off this thread: the session may be sending a trial's inputs still.
                threading.Thread(target=self.close, args=(request,), daemon=True).start()
            elif op == "results":
                session = self.sessions.get(request.get("session"))
                self.reply(dict(session.report(), id=request.get("id")) if session else
                           {"id": request.get("id"), "error": "no such session"})
            elif op == "stats":
                self.reply(dict(self.tasks.stats(), id=request.get("id")))
            elif op == "write":
                self.reply(dict(self.write_set(request), id=request.get("id")))
            elif op == "recheck":
                self.reply(dict(self.recheck(request), id=request.get("id")))
            elif op in ("baseline", "baseline_time"):
                # Off this thread: building the reference, torch.compile and the timed calls take seconds.
                answer = self.baseline_set_up if op == "baseline" else self.baseline_time
                threading.Thread(target=self.answer_apart, args=(answer, request), daemon=True).start()
            else:
                for fd in fds:
                    os.close(fd)
                self.reply({"id": request.get("id"), "error": f"unknown request {op!r}"})

    def answer_apart(self, answer, request):
        """answer(request)'s reply, with the request's id (on a thread of its own: the requests go on meanwhile)."""
        self.reply(dict(answer(request), id=request.get("id")))

    def open(self, request, fd):
        session = _Session(request.get("id"), socket.socket(fileno=fd), request, self.device)
        self.sessions[session.id] = session
        session.thread = threading.Thread(target=self.run_session, args=(session, request), daemon=True)
        session.thread.start()

    def close(self, request):
        session = self.sessions.pop(request.get("session"), None)
        if session is None:
            self.reply({"id": request.get("id"), "error": "no such session"})
            return
        # The candidate has ended; a session still waiting on its end stops now.
        try:
            session.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        session.thread.join()
        session.sock.close()
        _recheck(session)
        session.buffers.clear()  # Buffers of trials never done: released.
        session.calls.clear()
        session.made.clear()
        # What the session made and copied goes back to the device: torch's cache would keep it for this process
        # alone, and the next candidate (or a preparation beside it) needs it.
        if self.device.type == "cuda":
            torch.cuda.empty_cache()
        # The session's device work, read once it is over (reading it may wait for the device).
        self.reply(dict(session.report(), id=request.get("id"), work_ms=session.work.ms(),
                        waited_ms=session.waited_ms))

    def run_session(self, session, request):
        try:
            entry = self.tasks.acquire(request)
        except TaskError as e:
            self.reply({"id": session.id, "error": f"{e.message} [stage: {e.stage}]"})
            return
        except BaseException as e:  # noqa: BLE001
            self.reply({"id": session.id, "error": f"{type(e).__name__}: {e}"})
            return
        session.room = lambda: self.tasks.room_now(entry)
        session.holdings = self.tasks.holdings
        try:
            self.reply({"id": session.id, "ok": True, "trials": len(entry.seeds)})
            self.answer(session, entry, len(entry.seeds))
        finally:
            # The session's thread is its own: what it waited for task code is the session's (the close says it).
            session.waited_ms = self.tasks.task_code.waited_ms()
            self.tasks.release(entry)

    def answer(self, session, entry, trials):
        """Answers the candidate's requests until the session ends. The server's own failure (a device out of
        memory, a tensor the channel cannot take) is the session's error, anvil's, and the candidate is told at
        once: it never waits for an answer that will not come."""
        try:
            self.answer_requests(session, entry, trials)
        except (ChannelError, OSError):
            pass  # The candidate closed its end (or ended): the session is over.
        except BaseException as e:  # noqa: BLE001 - the server's failure
            _make_failed(session, "answering the candidate", e)
        if session.error:
            try:
                trial_channel.send(session.sock, {"error": "anvil's task server failed (not the candidate's doing)"})
            except (ChannelError, OSError):
                pass

    def answer_requests(self, session, entry, trials):
        sock = session.sock
        spec = session.sets_spec
        session.weights = _weights_of(entry.model)
        trial_channel.send(sock, {"trials": trials, "compare": entry.reference, "sets": spec["count"],
                                  "sets_written": bool(spec["write"]),
                                  "held_out": session.held_out, "rechecks": session.rechecks,
                                  "weights": bool(session.weights), "init_on": entry.init_on})
        while True:
            try:
                message, _ = trial_channel.receive(sock)
            except ChannelClosed:
                raise
            except ChannelError as e:
                message = {"broken": str(e)}
            if "done" in message:
                _recheck(session)  # After a whole call since, the last trial's buffers are read once more.
            problem = self.check_request(session, entry, message, trials)
            if problem:
                with session.lock:
                    session.candidate_error = problem
                trial_channel.send(sock, {"error": problem})
                return
            if "done" in message:
                if not self.compare(session, entry, message):
                    return
                trial_channel.send(sock, {"compared": message["done"]})
            elif message["get"] == "weights":
                session.weights_sent = True
                if _send(session, "the weights", trial_channel.send_weights, session.weights) is _SENT_NOTHING:
                    return
            elif message["get"] == "held_out":
                if not self.send_held_out(session, entry, message["k"]):
                    return
            elif message["get"] == "recheck":
                if not self.send_recheck(session, entry, message["k"]):
                    return
            elif message["get"] in ("set", "call"):
                if not self.send_set(session, entry, message["k"], message["get"] == "call"):
                    return
            elif not self.send_trial(session, entry, message["k"], message["get"] == "timing"):
                return

    @staticmethod
    def check_request(session, entry, message, trials):
        """What is wrong with a candidate's request ("" if nothing)."""
        if "broken" in message:
            return f"the candidate broke the channel's protocol: {message['broken']}"
        if "done" in message:
            k = message["done"]
            extra = set(message) - {"done", "problem", "set"}
            if (not entry.reference or type(k) is not int or extra or not isinstance(message.get("problem", ""), str)
                    or message.get("set", "trial") not in ("trial", "held_out", "recheck")):
                return f"a request anvil does not know: {message!r:.200}"
            if (message.get("set", "trial"), k) not in session.buffers:
                return f"{_what(message.get('set', 'trial'), k)} is not waiting for its outputs"
            return ""
        k = message.get("k")
        kind = message.get("get")
        if (kind not in ("trial", "timing", "set", "call", "held_out", "recheck", "weights") or type(k) is not int
                or set(message) != {"get", "k"}):
            return f"a request anvil does not know: {message!r:.200}"
        if kind == "weights":
            if not session.weights or k != 0:
                return f"a request anvil does not know: {message!r:.200} (this session sends no weights)"
            if session.weights_sent:
                return "the weights were asked for already (once)"
            return ""
        if kind == "recheck":
            if session.recheck_seed is None:
                return "a recheck asked for before anvil drew one (after the last timed call)"
            if k not in session.recheck_sets:
                return f"timed set {k} is not one anvil rechecks ({session.recheck_sets})"
            if k in session.recheck_sent:
                return f"the recheck of timed set {k} was asked for already (once)"
            return ""
        if kind == "held_out":
            if not 0 <= k < session.held_out:
                return f"held-out set {k} does not exist (the task has {session.held_out})"
            if k in session.held_sent:
                return f"held-out set {k}'s inputs were sent already (once)"
            return ""
        if kind in ("set", "call"):
            spec = session.sets_spec
            if spec["count"] == 0 or bool(spec["write"]) != (kind == "call"):
                return f"a request anvil does not know: {message!r:.200} (this session's timed sets come " + (
                    "as buffers per call)" if spec["write"] else "as copies per set)")
            if kind == "call":
                if not 0 <= k < MAX_CALLS:
                    return f"timed call {k} does not exist"
                if k in session.calls_sent:
                    return f"the buffers of timed call {k} were sent already (once)"
                return ""
            if not 0 <= k < spec["count"]:
                return f"input set {k} of the timed calls does not exist (they have {spec['count']})"
            if k in session.sets_sent:
                return f"input set {k} of the timed calls was sent already (once)"
            return ""
        if not 0 <= k < trials:
            return f"trial {k} does not exist (the task has {trials})"
        if kind == "trial" and k in session.served:
            return f"trial {k}'s inputs were sent already (each trial's once)"
        if kind == "timing" and k in session.timing:
            return f"trial {k}'s inputs for the timed calls were sent already (once)"
        return ""

    def send_trial(self, session, entry, k, timing=False):
        """Trial k's inputs (and, when the session compares, buffers for its outputs); for the timed calls, fresh
        copies of its inputs alone (a task without timing sets of its own). False when the session ends."""
        try:
            with session.work.piece():
                inputs, expected = self.tasks.trial(entry, k, reference=not timing)
            if entry.trials is None and not timing:
                session.made[k] = expected  # Made for this request: kept until compared.
        except BaseException as e:  # noqa: BLE001 - the server's failure
            _make_failed(session, f"making trial {k}", e)
            return False
        buffers = _send_inputs(session, f"trial {k}", inputs, None if timing else expected)
        if entry.trials is None and self.device.type == "cuda" and entry.trial_bytes >= LARGE_TRIAL:
            # Made for this request and copied into the candidate's buffers: what torch keeps of the inputs goes back
            # to the device, where the candidate computes its outputs.
            inputs = None
            torch.cuda.empty_cache()
        if buffers is _SENT_NOTHING:
            return False
        with session.lock:
            if timing:
                session.timing.append(k)
                return True
            session.served.append(k)
            if entry.reference:
                session.buffers[("trial", k)] = buffers
        return True

    def send_held_out(self, session, entry, k):
        """Held-out set k's inputs and buffers for its outputs (a comparing session of a task with held-out sets).
        False when the session ends."""
        try:
            with session.work.piece():
                inputs, expected = self.tasks.held_out(entry, k)
        except BaseException as e:  # noqa: BLE001 - the server's failure
            _make_failed(session, f"reading held-out set {k}", e)
            return False
        buffers = _send_inputs(session, f"held-out set {k}", inputs, expected)
        if buffers is _SENT_NOTHING:
            return False
        with session.lock:
            session.held_sent.append(k)
            session.buffers[("held_out", k)] = buffers
        return True

    def send_recheck(self, session, entry, k):
        """Buffers for timed set k's last outputs, as anvil's recheck compares them: for each output the elements
        the seed draws (timing.recheck_points: of a large output 2^18 of them, flat, in their order), or all of it.
        False when the session ends."""
        spec = session.sets_spec
        try:
            with session.work.piece():
                expected = self.tasks.timed_set_expected(entry, spec["from"], k)
            points = [recheck_points(o.numel(), session.recheck_seed, k, i) for i, o in enumerate(expected)]
            shapes = [list(o.shape) if p is None else [len(p)] for o, p in zip(expected, points)]
        except BaseException as e:  # noqa: BLE001 - the server's failure
            _make_failed(session, f"making the recheck of timed set {k}", e)
            return False
        outputs = [(f"out{i}", o.dtype, shape, o.device) for i, (o, shape) in enumerate(zip(expected, shapes))]
        buffers = _send(session, f"the recheck of timed set {k}", trial_channel.send_tensors, [], outputs)
        if buffers is _SENT_NOTHING:
            return False
        with session.lock:
            session.recheck_sent[k] = points
            session.buffers[("recheck", k)] = buffers
        return True

    def recheck(self, request):
        """anvil's `recheck` (after the last timed call, before the worker hears of it): the seed that picks the
        timed sets whose last outputs are compared again, and how many."""
        session = self.sessions.get(request.get("session"))
        if session is None:
            return {"error": "no such session"}
        seed, sample = request.get("seed"), request.get("sample")
        if type(seed) is not int or type(sample) is not int or not session.rechecks:
            return {"error": f"a recheck this session cannot take: {request!r:.200}"}
        session.recheck_sets = recheck_sample(session.sets_spec["count"], sample, seed)
        session.recheck_seed = seed
        return {"ok": True, "sets": session.recheck_sets}

    def send_set(self, session, entry, k, call=False):
        """Input set k of the timed calls, copied; or (`call`) the buffers of timed call k, zeroed, which this server
        writes the call's set (k modulo the sets) into after the worker said `ready` for it. Every call gets buffers
        of its own, never reused: neither an address nor a buffer tells the candidate which set a call has. False
        when the session ends."""
        spec = session.sets_spec
        try:
            with session.work.piece():
                values = self.tasks.timed_sets(entry, spec["from"], spec["count"])[k % spec["count"]]
            named = [(f"in{i}", v) for i, v in enumerate(values)]
        except BaseException as e:  # noqa: BLE001 - the server's failure
            _make_failed(session, f"making the inputs of timed call {k}" if call else f"making timed set {k}", e)
            return False

        def register(buffers):
            with session.lock:
                session.calls_sent.add(k)
                session.calls = {k: buffers}  # An earlier call's buffers: this side's mapping goes.

        if call:
            sent = _send(session, f"the buffers of timed call {k}", trial_channel.send_input_buffers, named, register)
        else:
            sent = _send(session, f"timed set {k}", trial_channel.send_tensors, named)
        if sent is _SENT_NOTHING:
            return False
        if not call:
            with session.lock:
                session.sets_sent.append(k)
        return True

    def write_set(self, request):
        """anvil's `write` (the worker said `ready` for timed call k, and waits for its `go`): the call's set into
        the buffers the candidate took for that call."""
        session = self.sessions.get(request.get("session"))
        k = request.get("call")
        if session is None:
            return {"error": "no such session"}
        with session.lock:
            targets = session.calls.get(k) if type(k) is int else None
        if targets is None:
            return {"candidate_error": f"the worker did not take the buffers of timed call {k!r} before it"}
        try:
            with session.work.piece():
                for buffer, value in targets:
                    buffer.copy_(value)
            if self.device.type == "cuda":
                torch.cuda.synchronize(self.device)  # Written before `go` (anvil asks this on the cpu backend only).
        except BaseException as e:  # noqa: BLE001 - the server's failure
            return {"error": f"writing the inputs of timed call {k}: {type(e).__name__}: {e}"}
        return {"ok": True}

    def baseline_set_up(self, request):
        """anvil's `baseline`: the task's reference (as a comparing session's, kept with the task) set up to time on
        trial 0's inputs, eager or torch.compile'd, its first call made; the timed calls wait for `baseline_time`,
        which anvil sends once it has the device alone."""
        mode = request.get("mode")
        if mode not in ("eager", "compile"):
            return {"error": f"a baseline this server cannot take: {request!r:.200}"}
        whole = self.tasks.task_code.span()
        try:
            entry = self.tasks.acquire(dict(request, compare=True))
        except TaskError as e:
            return {"error": f"{e.message} [stage: {e.stage}]"}
        except BaseException as e:  # noqa: BLE001 - the server's failure
            return {"error": f"{type(e).__name__}: {e}"}
        baseline = _Baseline(entry, mode)
        baseline.phases_ms["task"] = whole.ms()
        try:
            compile_seconds, compile_graphs = baseline.set_up(self.tasks)
        except TaskError as e:  # The task's own code: the baseline cannot run (as the baseline worker says it).
            self._end_baseline(baseline)
            return {"failed": f"{e.message} [stage: {e.stage}]"}
        except BaseException as e:  # noqa: BLE001 - torch.compile or the reference failed: the baseline's error
            self._end_baseline(baseline)
            return {"failed": f"{type(e).__name__}: {e}"}
        # Waiting for task code another request ran (another task's torch.compile, its trials): other verdicts' time.
        baseline.phases_ms["wait"] = whole.waited_ms()
        if compile_seconds is not None:
            # torch.compile's set-up beside its first call: dynamo's import (once per process), the thread's turn.
            baseline.phases_ms["dynamo"] = max(0.0, whole.ms() - compile_seconds * 1000 - baseline.phases_ms["task"]
                                               - baseline.phases_ms["inputs"])
        bid = next(self.baseline_ids)
        self.baselines[bid] = baseline
        return {"ok": True, "baseline": bid, "compile_seconds": compile_seconds, "compile_graphs": compile_graphs,
                "phases_ms": baseline.phases_ms}

    def baseline_time(self, request):
        """anvil's `baseline_time` (it holds the device alone): the warmup and timed calls of a baseline set up,
        which then goes."""
        baseline = self.baselines.pop(request.get("baseline"), None)
        warmup, iters = request.get("warmup"), request.get("iters")
        if baseline is None or type(warmup) is not int or type(iters) is not int or warmup < 0 or iters < 1:
            if baseline is not None:
                self._end_baseline(baseline)
            return {"error": f"a baseline time this server cannot take: {request!r:.200}"}
        calls = self.tasks.task_code.span()
        try:
            with self.tasks.task_code:
                set_tf32(baseline.entry.tf32)
                with torch.no_grad():
                    # Torch's events around each call after an L2 flush, as the baseline worker's timer takes them
                    # (its compiled timer is sealed to one use per process: candidates').
                    timer = Timer(self.device, compiled="")
                    times = timer.time(lambda: baseline.fn(*baseline.inputs), warmup, iters)
            answer = {"ok": True, "times_ms": times}
        except BaseException as e:  # noqa: BLE001 - the reference failed: the baseline's error
            answer = {"failed": f"{type(e).__name__}: {e}"}
        calls_ms, calls_waited = calls.ms(), calls.waited_ms()
        self._end_baseline(baseline)
        # Where the server's time went (docs/verdict.md, `baseline_phase_seconds`); `wait` is the timed side's.
        answer["phases_ms"] = dict(calls=calls_ms, wait=calls_waited + baseline.reset_waited_ms,
                                   **{k: baseline.phases_ms[k] for k in ("reset", "release", "collect", "give_back")})
        return answer

    def _end_baseline(self, baseline):
        """The baseline goes: its compiled code (`reset` in its phases), its task's use (`release`) and its memory
        (`give_back`)."""
        reset = self.tasks.task_code.span()
        compiled = baseline.fn is not baseline.entry.model
        baseline.fn = baseline.inputs = None
        if compiled:
            # Its compiled code, guarded on the kept model, goes with it (on the thread that compiles, which takes
            # task code there: a compile queued before the reset takes it too).
            self.tasks.compiling(torch._dynamo.reset)
        baseline.reset_waited_ms = reset.waited_ms()
        baseline.phases_ms["reset"] = reset.ms()
        began = time.monotonic()
        release_collect = self.tasks.release(baseline.entry)
        released = time.monotonic()
        give_back_collect = self.tasks.give_back_memory()
        # `collect`: the garbage collections in either (give_back_memory), apart from them.
        baseline.phases_ms.update(release=(released - began) * 1000 - release_collect,
                                  collect=release_collect + give_back_collect,
                                  give_back=(time.monotonic() - released) * 1000 - give_back_collect)

    def compare(self, session, entry, message):
        """Trial k's outputs: each buffer copied into memory never exported, that copy compared with the
        reference's, then a random sample of the buffer read again. False on the server's own failure."""
        k = message["done"]
        kind = message.get("set", "trial")
        buffers = session.buffers.pop((kind, k))
        drawn = []
        result = {"problem": "", "outputs": []}
        with session.work.piece():
            try:
                if message.get("problem"):
                    # The worker found the outputs' count, shape or dtype other than the reference's.
                    result["problem"] = message["problem"][:500]
                else:
                    if kind == "held_out":
                        expected = self.tasks.held_out(entry, k)[1]
                    elif kind == "recheck":
                        expected = self.tasks.timed_set_expected(entry, session.sets_spec["from"], k)
                        expected = [o if p is None else o.reshape(-1)[torch.from_numpy(p).to(o.device)]
                                    for o, p in zip(expected, session.recheck_sent[k])]
                    else:
                        expected = session.made.pop(k) if k in session.made else self.tasks.trial(entry, k)[1]
                    for (name, buffer), want in zip(buffers, expected):
                        atol, rtol, nan_equal = _tolerance(session.request, name, want.dtype)
                        points = None
                        if buffer.numel():
                            points = torch.randint(0, buffer.numel(), (min(RECHECK_SAMPLE, buffer.numel()),),
                                                   device=buffer.device, generator=session.draws(buffer.device))
                        # Compared as copied into the server's own memory, a chunk at a time (no second copy of a
                        # multi-GB output on the device); the sampled elements read again later against the copy.
                        r, kept = compare_copied(want, buffer, atol, rtol, nan_equal, points)
                        r.update(name=name, dtype=tensor_io.dtype_name(want.dtype), atol=atol, rtol=rtol)
                        for key in _FLOAT_FIELDS:
                            r[key] = json_number(r[key])
                        result["outputs"].append(r)
                        if not r["ok"] and not result["problem"]:
                            result["problem"] = r["problem"]
                        if points is not None:
                            drawn.append((name, buffer, points, kept))
            except BaseException as e:  # noqa: BLE001 - the server's failure
                _make_failed(session, f"comparing {_what(kind, k)}", e)
                return False
            finally:
                buffers.clear()
        # Read again now, and once more at the next `done` or the close (then unmapped here; the candidate's own
        # mapping keeps its pages until it lets go).
        session.recheck = None if _read_again(session, _what(kind, k), drawn) else (_what(kind, k), drawn)
        by_kind = {"held_out": session.held_results, "recheck": session.recheck_results}
        with session.lock:
            by_kind.get(kind, session.results)[k] = result
        return True


class _Baseline:
    """A baseline set up (docs/protocol.md, "baselines"): the task's kept reference, eager or compiled, and its own
    trial 0's inputs (a copy of the kept trial's: a reference that writes into its inputs leaves it alone)."""

    def __init__(self, entry, mode):
        self.entry, self.mode = entry, mode
        self.fn = entry.model
        self.inputs = None
        # Where the set-up's time went: "task" (loaded or found), "inputs" (trial 0's, copied), "dynamo", "wait".
        self.phases_ms = {}
        self.reset_waited_ms = 0.0  # The wait for task code at its end, before its compiled code went.

    def set_up(self, tasks):
        """Trial 0's inputs copied, and for `compile` torch.compile's first call, synchronized: its
        (compile_seconds, compile_graphs), (None, None) for `eager`."""
        inputs_made = tasks.task_code.span()
        kept = self.entry.trials is not None
        inputs = tasks.trial(self.entry, 0, reference=False)[0]
        # A kept trial's inputs are copied (a reference that writes into its inputs leaves them alone); inputs made
        # for this request are the baseline's own already (a multi-GB task's: no second copy on the device).
        self.inputs = [v.clone() if kept and isinstance(v, torch.Tensor) else v for v in inputs]
        if tasks.device.type == "cuda":
            torch.cuda.synchronize(tasks.device)
        self.phases_ms["inputs"] = inputs_made.ms()
        if self.mode != "compile":
            return None, None
        if tasks.compiler is not None:
            tasks.compiler.exception()  # torch.compile's modules imported at the start: this set-up's `dynamo` phase.
        self.fn, seconds, graphs = tasks.compiling(lambda: self._first_call(tasks))
        return seconds, graphs

    def _first_call(self, tasks):
        """torch.compile's first call, synchronized, on the thread that compiles and under task code (the reference's
        forward, traced and run: the TF32 switches, the generator and dynamo's counters are the process's), which it
        lends to other tasks' trials while inductor compiles (Tasks.task_code): (fn, seconds, graphs), the seconds
        without the waits to take task code back."""
        sync = (lambda: torch.cuda.synchronize(tasks.device)) if tasks.device.type == "cuda" else (lambda: None)
        set_tf32(self.entry.tf32)
        taken = tasks.task_code.waited_ms()
        fn, seconds, graphs = compile_first_call(self.entry.model, self.inputs, sync,
                                                 lend=lambda: tasks.task_code.lent(self.entry.tf32))
        return fn, max(0.0, seconds - (tasks.task_code.waited_ms() - taken) / 1000), graphs


def _name_process(name):
    """The process's name (/proc/PID/comm, 15 bytes at most), as anvil's messages about the device's memory name
    its holders: "anvil-tasks", not "python3"."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(15, ctypes.c_char_p(name), 0, 0, 0)  # PR_SET_NAME
    except (OSError, AttributeError):
        pass


def main(argv=None):
    parser = argparse.ArgumentParser(prog="anvil_py.task_server")
    parser.add_argument("--control-fd", type=int, required=True)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--budget-bytes", type=int, default=0, help="0: half of the device's free memory")
    parser.add_argument("--warm-compiler", choices=("auto", "on", "off"), default="auto",
                        help="import torch.compile's modules at the start, in the background (auto: on a GPU)")
    args = parser.parse_args(argv)
    _name_process(b"anvil-tasks")
    control = socket.socket(fileno=args.control_fd)
    try:
        device = torch.device(args.device)
        if device.type == "cuda":
            torch.zeros(1, device=device)
        budget = args.budget_bytes or default_budget(device)
        # What exists now (torch's modules, mostly) lives as long as the server: the collector need not walk it
        # again each time the server gives memory back.
        gc.collect()
        gc.freeze()
    except BaseException as e:  # noqa: BLE001
        trial_channel.send(control, {"ready": False, "error": f"{type(e).__name__}: {e}".replace('"', "'")})
        return 1
    server = Server(control, device, budget)
    if args.warm_compiler == "on" or (args.warm_compiler == "auto" and device.type == "cuda"):
        server.tasks.warm_compiler()
    trial_channel.send(control, {"ready": True, "pid": os.getpid(), "budget_bytes": budget,
                                 "session_room": SESSION_ROOM, "session_margin": SESSION_MARGIN})
    server.serve()
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code or 0)
