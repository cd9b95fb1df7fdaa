"""The task server (docs/protocol.md, "trial data"): the trusted side that hands a candidate its trial inputs.

anvil starts one per device, as its child, and talks to it on a socket pair it inherits (--control-fd); it ends
when that socket closes. For each candidate run anvil opens a session: it sends the task, its secret trial seeds
and one end of a new socket pair whose other end the candidate worker inherits. The server makes the task's
inputs from the seeds (on the device, in trusted code, never from files), keeps them for the next candidate of the
same task within a memory budget (least recently used tasks go first), and answers the candidate's requests on its
end: each trial's inputs, once, as copies in sealed memfds of their own. It listens on no address: the only way in
is a descriptor anvil handed out.
"""

import argparse
import collections
import itertools
import os
import socket
import sys
import threading
import traceback

import torch

from anvil_py import trial_channel
from anvil_py.task_loader import TaskError, call_stage, load_module
from anvil_py.task_worker import make_inputs
from anvil_py.trial_channel import ChannelClosed, ChannelError


def _default_budget(device):
    """Half of what is free at start: the device's memory, or the host's for the CPU."""
    if torch.device(device).type == "cuda":
        return torch.cuda.mem_get_info()[0] // 2
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024 // 2
    except OSError:
        pass
    return 1 << 30


def _nbytes(values):
    return sum(v.numel() * v.element_size() for v in values if isinstance(v, torch.Tensor))


class _Entry:
    """One task's inputs: made from its seeds once, or on each request when they do not fit the budget."""

    def __init__(self, key, path, seeds, device):
        self.key, self.path, self.seeds, self.device = key, path, seeds, device
        self.get_inputs = None
        self.module_name = ""
        self.inputs = None  # [[values] per trial] while kept.
        self.bytes = 0
        self.users = 0
        self.ready = threading.Event()
        self.error = None


class Tasks:
    """Prepared tasks kept warm within `budget` bytes, least recently used evicted first. Task code (importing the
    task, get_inputs under a seed) runs one call at a time: torch's generator is the process's."""

    def __init__(self, device, budget):
        self.device, self.budget = device, budget
        self.lock = threading.Lock()
        self.task_code = threading.Lock()
        self.entries = collections.OrderedDict()
        self.names = itertools.count()
        self.counts = {"loads": 0, "hits": 0, "evictions": 0, "made_on_request": 0}

    def kept_bytes(self):
        return sum(e.bytes for e in self.entries.values() if e.inputs is not None)

    def acquire(self, key, path, seeds):
        with self.lock:
            entry = self.entries.get(key)
            if entry is not None and entry.error is None:
                self.entries.move_to_end(key)
                entry.users += 1
                self.counts["hits"] += 1
            else:
                entry = _Entry(key, path, seeds, self.device)
                entry.users = 1
                self.entries[key] = entry
                self.entries.move_to_end(key)
                self.counts["loads"] += 1
                threading.Thread(target=self._load, args=(entry,), daemon=True).start()
        entry.ready.wait()
        if entry.error is not None:
            self.release(entry)
            raise entry.error
        return entry

    def release(self, entry):
        with self.lock:
            entry.users -= 1
            if entry.error is not None and self.entries.get(entry.key) is entry and entry.users == 0:
                del self.entries[entry.key]

    def _load(self, entry):
        try:
            with self.task_code:
                entry.module_name = f"anvil_task_{next(self.names)}"
                module = load_module(entry.path, entry.module_name)
                if not hasattr(module, "get_inputs"):
                    raise TaskError("missing", f"{os.path.basename(entry.path)} does not define get_inputs")
                entry.get_inputs = module.get_inputs
                first = self._make(entry, 0)
            entry.bytes = _nbytes(first) * len(entry.seeds)
            with self.lock:
                if self._make_room(entry):
                    entry.inputs = [first]
            if entry.inputs is not None:
                with self.task_code:
                    entry.inputs += [self._make(entry, k) for k in range(1, len(entry.seeds))]
        except BaseException as e:  # noqa: BLE001 - the session says it, anvil judges it
            entry.error = e if isinstance(e, TaskError) else TaskError("server", f"{type(e).__name__}: {e}",
                                                                       traceback.format_exc())
        finally:
            entry.ready.set()

    def _make_room(self, entry):
        """Evicts unused tasks, least recently used first, until `entry` fits (under self.lock). False: it does
        not fit even alone (or beside the tasks in use): its inputs are made on each request."""
        for key in list(self.entries):
            if self.kept_bytes() + entry.bytes <= self.budget:
                break
            other = self.entries[key]
            if other is not entry and other.users == 0 and other.inputs is not None:
                del self.entries[key]
                sys.modules.pop(other.module_name, None)
                self.counts["evictions"] += 1
        return self.kept_bytes() + entry.bytes <= self.budget

    def _make(self, entry, k):
        return make_inputs(entry.get_inputs, int(entry.seeds[k]), self.device)

    def trial_inputs(self, entry, k):
        if entry.inputs is not None:
            return entry.inputs[k]
        with self.task_code:
            self.counts["made_on_request"] += 1
            return self._make(entry, k)

    def stats(self):
        with self.lock:
            return dict(self.counts, tasks=len(self.entries), kept_bytes=self.kept_bytes(), budget_bytes=self.budget)


class _Session:
    def __init__(self, sid, sock):
        self.id, self.sock = sid, sock
        self.served = []
        self.error = ""          # The server's own failure: anvil's, never the candidate's.
        self.candidate_error = ""  # The candidate broke the protocol.
        self.thread = None


class Server:
    def __init__(self, control, device, budget):
        self.control = control
        self.device = device
        self.tasks = Tasks(device, budget)
        self.send_lock = threading.Lock()
        self.sessions = {}

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
            elif op == "stats":
                self.reply(dict(self.tasks.stats(), id=request.get("id")))
            else:
                for fd in fds:
                    os.close(fd)
                self.reply({"id": request.get("id"), "error": f"unknown request {op!r}"})

    def open(self, request, fd):
        session = _Session(request.get("id"), socket.socket(fileno=fd))
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
        self.reply({"id": request.get("id"), "served": session.served, "error": session.error,
                    "candidate_error": session.candidate_error})

    def run_session(self, session, request):
        try:
            seeds = [str(s) for s in request["seeds"]]
            entry = self.tasks.acquire(request["prepared"], request["task"], seeds)
        except TaskError as e:
            self.reply({"id": session.id, "error": f"{e.message} [stage: {e.stage}]"})
            return
        except BaseException as e:  # noqa: BLE001
            self.reply({"id": session.id, "error": f"{type(e).__name__}: {e}"})
            return
        try:
            self.reply({"id": session.id, "ok": True, "trials": len(seeds)})
            self.answer(session, entry, len(seeds))
        finally:
            self.tasks.release(entry)

    def answer(self, session, entry, trials):
        sock = session.sock
        try:
            trial_channel.send(sock, {"trials": trials})
            while True:
                try:
                    message, _ = trial_channel.receive(sock)
                except ChannelClosed:
                    raise
                except ChannelError as e:
                    message = {"broken": str(e)}
                k = message.get("k")
                if "broken" in message:
                    problem = f"the candidate broke the channel's protocol: {message['broken']}"
                elif message.get("get") != "trial" or type(k) is not int or set(message) != {"get", "k"}:
                    problem = f"a request anvil does not know: {message!r:.200}"
                elif not 0 <= k < trials:
                    problem = f"trial {k} does not exist (the task has {trials})"
                elif k in session.served:
                    problem = f"trial {k}'s inputs were sent already (each trial's once)"
                else:
                    problem = ""
                if problem:
                    session.candidate_error = problem
                    trial_channel.send(sock, {"error": problem})
                    return
                try:
                    values = self.tasks.trial_inputs(entry, k)
                    named = [(f"in{i}", v) for i, v in enumerate(values)]
                except BaseException as e:  # noqa: BLE001 - the server's failure
                    session.error = f"making trial {k}'s inputs: {type(e).__name__}: {e}"
                    trial_channel.send(sock, {"error": "anvil's task server failed (not the candidate's doing)"})
                    return
                try:
                    trial_channel.send_tensors(sock, named)
                except ChannelError:
                    raise
                except OSError as e:
                    if e.errno in (32, 104):  # EPIPE, ECONNRESET: the candidate went away.
                        return
                    session.error = f"sending trial {k}'s inputs: {e}"
                    return
                session.served.append(k)
        except (ChannelError, OSError):
            return  # The candidate closed its end (or ended): the session is over.


def main(argv=None):
    parser = argparse.ArgumentParser(prog="anvil_py.task_server")
    parser.add_argument("--control-fd", type=int, required=True)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--budget-bytes", type=int, default=0, help="0: half of the device's free memory")
    args = parser.parse_args(argv)
    control = socket.socket(fileno=args.control_fd)
    try:
        device = torch.device(args.device)
        if device.type == "cuda":
            torch.zeros(1, device=device)
        budget = args.budget_bytes or _default_budget(device)
    except BaseException as e:  # noqa: BLE001
        trial_channel.send(control, {"ready": False, "error": f"{type(e).__name__}: {e}".replace('"', "'")})
        return 1
    server = Server(control, device, budget)
    trial_channel.send(control, {"ready": True, "pid": os.getpid(), "budget_bytes": budget})
    server.serve()
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code or 0)
