"""The task server's kept tasks (anvil_py/task_server.py; docs/protocol.md, "trial data"): each task's module, reference
and trials, made on the device from their secret seeds and kept warm across candidates within a memory budget
(least recently used first out, or made on each request when they do not fit); task code runs one call at a time;
and what the server no longer holds goes back to the device.
"""

import collections
import concurrent.futures
import contextlib
import gc
import importlib
import itertools
import json
import os
import sys
import threading
import time
import traceback

import torch

from anvil_py import device_buffers
from anvil_py.task_loader import TaskError, call_stage, load_module
from anvil_py.task_worker import HELD_OUT_SETS, held_out_set, make_inputs, output_tensors, reference_model, set_tf32


def default_budget(device):
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


# On a GPU, a candidate's session needs about this many times one trial's bytes (its inputs and outputs), and the
# margin, free beside what the server keeps: the buffers of two trials (the last compared one's stay until the next
# `done`, for their second reading), the candidate's own outputs, the server's private copy of them, and the
# processes' CUDA contexts. On an H100 3x and no margin left 27_SELU's third trial without a buffer.
SESSION_ROOM = 4
SESSION_MARGIN = 1 << 30
# Device memory torch may hold beyond the kept tasks, unexplained, before giving it back looks for garbage cycles.
COLLECT_ABOVE = 64 << 20


class _Entry:
    """One task's trials: each one's inputs and, when the session compares, the reference's outputs; made from the
    seeds once and kept, or made on each request when they do not fit the budget."""

    def __init__(self, key, request):
        self.key = key
        self.path = request["task"]
        self.prepared = request["prepared"]
        self.seeds = [str(s) for s in request["seeds"]]
        # The timing sets' seeds (each set is made here from its own).
        self.timing_seeds = [str(s) for s in request.get("timing_seeds") or []]
        self.reference = bool(request.get("compare"))
        self.init_seed = int(request.get("init_seed", 42))
        self.tf32 = request.get("tf32", "off")
        self.get_inputs = None
        self.model = None
        self.init_on = None  # Where the reference's __init__ ran ("cuda", "cpu"): the candidate's ModelNew runs there.
        self.module_name = ""
        self.trials = None  # [(inputs, expected outputs or None) per trial] while kept.
        self.sets = None  # The timed calls' input sets, once asked for: (source, [inputs per set]).
        self.held = {}  # Held-out set -> (inputs, the reference's outputs), once asked for.
        self.held_recipes = None  # kept_held_out_sets.json, read at the first.
        self.set_expected = {}  # (source, timed set) -> the reference's outputs, once a recheck asked for them.
        self.sets_lock = threading.Lock()
        self.bytes = 0
        self.weight_bytes = 0  # The reference's weights: all a task made on request keeps between its sessions.
        self.trial_bytes = 0  # One trial's inputs and reference outputs.
        self.users = 0
        self.ready = threading.Event()
        self.load_waited_ms = 0.0  # What its load waited for task code another thread ran (_TaskCodeLock).
        self.error = None

    def kept_bytes(self):
        """What the server keeps of this task between sessions: its trials, sets and weights while kept; its weights
        alone when made on request; nothing while loading or failed."""
        if self.trials is not None:
            return self.bytes
        return self.weight_bytes if self.error is None and self.ready.is_set() else 0


class _TaskCodeLock:
    """Tasks.task_code: task code runs one call at a time. What a thread waited for it while another thread ran task
    code (another verdict's preparation or trials, torch.compile's compile of another task's baseline) adds up on
    that thread (`waited_ms`): the requests report it (`waited_ms`, the baselines' `wait` phase) and anvil counts it
    as a queue, other verdicts' time (docs/verdict.md, `server_wait_seconds`).

    A compile lends it (`lent`) while inductor compiles the graphs dynamo traced (seconds, a minute and more on level
    3; no task code runs there): then code that makes tasks and trials (`making`: a task's load, a trial's inputs
    under its seed and the reference's outputs) may run, if its TF32 switches are the compile's (inductor reads
    them). The rest (set-ups and timed calls of baselines, dynamo's reset) waits for the compile to take it back."""

    def __init__(self):
        self._cv = threading.Condition()
        self._held = False
        self._lent = None  # While a compile lends task code: its TF32 switches ("off" or "default").
        self._taking_back = False
        self._waits = threading.local()
        self.lends = 0

    def _take(self, may):
        with self._cv:
            if self._held or not may():
                began = time.monotonic()
                self._cv.wait_for(lambda: not self._held and may())
                self.add((time.monotonic() - began) * 1000)
            self._held = True

    def _give(self):
        with self._cv:
            self._held = False
            self._cv.notify_all()

    def __enter__(self):
        self._take(lambda: self._lent is None and not self._taking_back)
        return self

    def __exit__(self, *exc):
        self._give()

    @contextlib.contextmanager
    def making(self, tf32):
        """Task code that makes a task or its trials with TF32 switches `tf32`: it may also run while a compile of
        the same switches lends task code."""
        self._take(lambda: not self._taking_back and self._lent in (None, tf32))
        try:
            yield self
        finally:
            self._give()

    @contextlib.contextmanager
    def lent(self, tf32):
        """Held by this thread (a compile of TF32 switches `tf32`): `making` code runs meanwhile; at the block's end
        the compile takes task code back before anyone else, waiting (this thread's wait) for code running in it,
        and the process's switches that dynamo checks after its compile are put back as they were."""
        switches = _global_switches()
        with self._cv:
            self._lent, self._held = tf32, False
            self.lends += 1
            self._cv.notify_all()
        try:
            yield
        finally:
            with self._cv:
                self._lent, self._taking_back = None, True
                began = time.monotonic()
                self._cv.wait_for(lambda: not self._held)
                self._held, self._taking_back = True, False
                self.add((time.monotonic() - began) * 1000)
            _set_global_switches(switches)

    def waited_ms(self):
        """What this thread has waited so far."""
        return getattr(self._waits, "ms", 0.0)

    def add(self, ms):
        """Counts `ms` as this thread's wait (a wait of another thread's on its behalf: a task's load)."""
        self._waits.ms = self.waited_ms() + ms

    def span(self):
        """This thread's time from now on, its waits for task code apart (a phase of a request)."""
        return _Span(self)


def _global_switches():
    """The process's switches that task code may set and dynamo checks are unchanged after it compiled (its
    GlobalStateGuard; grad mode and the like are per thread)."""
    return (torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32,
            torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
            torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction, torch.get_default_dtype(),
            torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled(),
            torch.get_num_threads())


def _set_global_switches(switches):
    cudnn, matmul, fp16, bf16, dtype, deterministic, warn_only, threads = switches
    torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = cudnn, matmul
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = fp16
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = bf16
    torch.set_default_dtype(dtype)
    torch.use_deterministic_algorithms(deterministic, warn_only=warn_only)
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)


class _Span:
    def __init__(self, code):
        self._code, self._began, self._waits = code, time.monotonic(), code.waited_ms()

    def waited_ms(self):
        """What the thread waited for task code since the span began."""
        return self._code.waited_ms() - self._waits

    def ms(self):
        """The milliseconds since it began, its waits left out."""
        return (time.monotonic() - self._began) * 1000 - self.waited_ms()


class Tasks:
    """Prepared tasks kept warm within `budget` bytes, least recently used evicted first. Task code (importing the
    task, building its model, get_inputs under a seed, the reference's forward) runs one call at a time: torch's
    generator and TF32 switches are the process's (but for a compile's lending: _TaskCodeLock)."""

    def __init__(self, device, budget):
        self.device, self.budget = device, budget
        self.lock = threading.Lock()
        self.task_code = _TaskCodeLock()
        # torch.compile's set-ups and torch._dynamo.reset() run on this one thread: a reset on one thread and a
        # compile on another after it kill the process (SIGSEGV; torch 2.11, python/tests/test_task_server.py).
        self.dynamo = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="anvil-dynamo")
        self.entries = collections.OrderedDict()
        self.names = itertools.count()
        self.counts = {"loads": 0, "hits": 0, "evictions": 0, "made_on_request": 0, "dropped_for_room": 0,
                       "waits_for_room": 0, "kept_unmade": 0, "collections": 0, "full_collections": 0}
        # Objects that survive a collection while no session or baseline runs (what torch.compile imported, the kept
        # tasks) are frozen out of the next ones' walk (gc.freeze): a collection walks the objects made since, a
        # millisecond where a full one took 0.15-0.2 s (bench/results/all_problems_h100_call8.md). A task dropped
        # since may have left garbage cycles among them, or torch holds more beyond the kept tasks after a collection
        # than after the last full one (`settled`): the next collection thaws them first (`thaw`).
        self.thaw = False
        self.settled = 0
        self.compiler = None  # warm_compiler's import, once asked.

    def kept_bytes(self):
        return sum(e.kept_bytes() for e in self.entries.values())

    def acquire(self, request):
        key = request["prepared"] + ("|reference" if request.get("compare") else "")
        with self.lock:
            entry = self.entries.get(key)
            if entry is not None and entry.error is None:
                self.entries.move_to_end(key)
                entry.users += 1
                self.counts["hits"] += 1
            else:
                entry = _Entry(key, request)
                entry.users = 1
                self.entries[key] = entry
                self.entries.move_to_end(key)
                self.counts["loads"] += 1
                threading.Thread(target=self._load, args=(entry,), daemon=True).start()
        if not entry.ready.is_set():
            entry.ready.wait()
            self.task_code.add(entry.load_waited_ms)  # The load's waits for task code are this request's too.
        if entry.error is not None:
            self.release(entry)
            raise entry.error
        self._room_for_session(entry)
        return entry

    def release(self, entry):
        """A session of `entry` has ended. A task that failed goes with its last session. Of a task made on each
        request (over the budget) what it made goes (timed sets, held-out sets), but its module and reference stay
        while their weights fit the budget: its next session or baseline (a verdict has three) neither imports it
        nor builds its Model again. The milliseconds it spent collecting garbage cycles (give_back_memory)."""
        with self.lock:
            entry.users -= 1
            if entry.users > 0 or self.entries.get(entry.key) is not entry:
                return 0.0
            if entry.error is None and entry.trials is not None:
                return 0.0
            if entry.error is None:
                with entry.sets_lock:
                    entry.sets, entry.held, entry.set_expected = None, {}, {}
                entry.bytes = entry.weight_bytes
            if entry.error is None and self.kept_bytes() <= self.budget:
                self.counts["kept_unmade"] += 1
            else:
                self._forget(entry.key)
        return self.give_back_memory()

    def _forget(self, key):
        """Drops a task (under self.lock)."""
        entry = self.entries.pop(key)
        self.thaw = True  # Its objects may be frozen: the next collection looks at them too.
        sys.modules.pop(entry.module_name, None)

    def _forget_unused(self, entry):
        """Drops every task but `entry` that no session or baseline uses (under self.lock)."""
        for key in [key for key, other in self.entries.items() if other is not entry and other.users == 0]:
            self._forget(key)
            self.counts["evictions"] += 1

    def give_back_memory(self):
        """What the server dropped goes back to the device (torch's caching allocator would keep it for this
        process alone): the candidate and the baselines need it. Tensors held only by garbage cycles are looked for
        when torch holds more than COLLECT_ABOVE beyond the kept tasks, or buffers stay exported while no session
        or baseline runs (a full collection takes 0.1-0.2 s once torch.compile ran here, and a verdict ends five
        sessions and baselines); a collection walks the objects made since the last one that ran while nothing else
        did, unless it must thaw the rest (`thaw`). The milliseconds the collection took (0.0: none ran)."""
        if self.device.type != "cuda":
            return 0.0
        with self.lock:
            loose = self._loose()
            thaw, self.thaw = self.thaw, False
        collect_ms = 0.0
        if loose > COLLECT_ABOVE:
            began = time.monotonic()
            if thaw:
                gc.unfreeze()
                self.counts["full_collections"] += 1
            gc.collect()
            with self.lock:
                if not any(e.users for e in self.entries.values()):  # No session or baseline runs: freeze.
                    after = self._loose()
                    if thaw:
                        self.settled = after
                    elif after > self.settled + COLLECT_ABOVE:
                        self.thaw = True  # Held beyond the last full collection's level: walk them all next time.
                    gc.freeze()
            collect_ms = (time.monotonic() - began) * 1000
            self.counts["collections"] += 1
        elif thaw:
            with self.lock:
                self.thaw = True  # For the next collection.
        torch.cuda.empty_cache()
        return collect_ms

    def _loose(self):
        """What torch holds on the device beyond the kept tasks, and while no session or baseline runs the buffers
        still exported (under self.lock)."""
        loose = torch.cuda.memory_allocated(self.device) - self.kept_bytes()
        if not any(e.users for e in self.entries.values()):
            loose += device_buffers.exported_bytes()
        return loose

    def _free(self):
        return torch.cuda.mem_get_info(self.device)[0]

    def in_use_bytes(self):
        """What the server holds on its device beyond its kept tasks: the sessions' and baselines' tensors (trials
        made on request, private copies, compiled code's workspaces) and the buffers it exported. 0 on the CPU,
        where the budget is the kept tasks'."""
        if self.device.type != "cuda":
            return 0
        return sum(self._in_use())

    def _in_use(self):
        """(the sessions' and baselines' tensors, the buffers exported) on a GPU, in bytes."""
        return (max(0, torch.cuda.memory_allocated(self.device) - self.kept_bytes()),
                device_buffers.exported_bytes())

    def holdings(self):
        """What the server holds on its device, in words, for a message about the device's memory running out
        ("" on the CPU)."""
        if self.device.type != "cuda":
            return ""
        with self.lock:
            kept, (in_use, exported), tasks = self.kept_bytes() >> 20, self._in_use(), len(self.entries)
        cached = max(0, torch.cuda.memory_reserved(self.device) - torch.cuda.memory_allocated(self.device)) >> 20
        in_use, exported = in_use >> 20, exported >> 20
        return (f"the task server held {kept + in_use + exported} MiB of its budget's {self.budget >> 20} MiB: "
                f"{tasks} kept task(s) {kept} MiB, sessions' and baselines' tensors {in_use} MiB, buffers exported "
                f"{exported} MiB; and {cached} MiB in torch's cache, free for the server alone")

    def held_bytes(self):
        """All the server holds on its device: its kept tasks and what is in use (torch's cached free blocks are
        given back after every session)."""
        return self.kept_bytes() + self.in_use_bytes()

    def _room_for_session(self, entry):
        """On a GPU, makes room for a session of `entry`: SESSION_ROOM × one trial's bytes and the margin, free on
        the device and within the budget beside what the server holds. Unused tasks go first, least recently used
        first; then, used by this session alone, `entry`'s own kept trials (made on each request from then on). What
        a session needs beyond that is the candidate's."""
        if self.device.type != "cuda":
            return
        need = SESSION_ROOM * entry.trial_bytes + SESSION_MARGIN

        def fits():
            with self.lock:
                held = self.held_bytes()
            return self._free() >= need and held + need <= self.budget

        if fits():
            return
        with self.lock:
            self._forget_unused(entry)
        self.give_back_memory()
        if fits():
            return
        with self.lock:
            if entry.users != 1 or entry.trials is None:
                return
            entry.trials = None
            with entry.sets_lock:
                if entry.sets is not None and entry.sets[0] == "trials":
                    entry.sets = None  # Views of the trials' inputs.
                entry.set_expected = {key: v for key, v in entry.set_expected.items() if key[0] != "trials"}
            self.counts["dropped_for_room"] += 1
        self.give_back_memory()

    def room_now(self, entry):
        """The device refused the server memory while a session of `entry` runs: every task no session uses goes,
        and what was dropped goes back to the device."""
        with self.lock:
            self.counts["waits_for_room"] += 1
            self._forget_unused(entry)
            self.thaw = True  # Every garbage cycle goes, the frozen ones too.
        self.give_back_memory()

    def _load(self, entry):
        try:
            with self.task_code.making(entry.tf32):
                entry.module_name = f"anvil_task_{next(self.names)}"
                module = load_module(entry.path, entry.module_name)
                if not hasattr(module, "get_inputs"):
                    raise TaskError("missing", f"{os.path.basename(entry.path)} does not define get_inputs")
                entry.get_inputs = module.get_inputs
                if entry.reference:
                    entry.model, entry.init_on = _build_reference(module, entry, self.device)
                first = self._make(entry, 0)
            entry.trial_bytes = _nbytes(first[0]) + _nbytes(first[1] or [])
            model = entry.model if isinstance(entry.model, torch.nn.Module) else torch.nn.Module()
            weights = list(model.parameters()) + list(model.buffers())
            entry.weight_bytes = _nbytes(weights)
            entry.bytes = entry.trial_bytes * len(entry.seeds) + entry.weight_bytes
            with self.lock:
                if self._make_room(entry):
                    entry.trials = [first]
            if entry.trials is not None:
                with self.task_code.making(entry.tf32):
                    entry.trials += [self._make(entry, k) for k in range(1, len(entry.seeds))]
        except BaseException as e:  # noqa: BLE001 - the session says it, anvil judges it
            entry.error = e if isinstance(e, TaskError) else TaskError("server", f"{type(e).__name__}: {e}",
                                                                       traceback.format_exc())
        finally:
            entry.load_waited_ms = self.task_code.waited_ms()  # This thread's: the load's alone.
            entry.ready.set()

    def _make_room(self, entry):
        """Evicts unused tasks, least recently used first, until `entry` fits the budget beside the other kept tasks
        and what the server has in use (sessions, baselines: a task loaded while a multi-GB session runs must not
        take the memory that session and its candidate need) (under self.lock). False: it does not fit even alone
        (or beside the tasks and sessions in use): its trials are made on each request."""
        in_use = max(0, self.in_use_bytes() - entry.trial_bytes)  # Its first trial, made already, is its own.

        def fits():
            return self.kept_bytes() + entry.bytes + in_use <= self.budget

        for key in list(self.entries):
            if fits():
                break
            other = self.entries[key]
            if other is not entry and other.users == 0 and other.ready.is_set():
                self._forget(key)
                self.counts["evictions"] += 1
        return fits()

    def _make(self, entry, k, reference=True, seeds=None):
        """(inputs, expected outputs or None) of trial k (of timing set k with the timing sets' `seeds`): the
        reference's forward right after its inputs, as prepare ran it (a forward that draws random numbers draws
        the same ones)."""
        inputs = make_inputs(entry.get_inputs, int((seeds or entry.seeds)[k]), self.device)
        if entry.model is None or not reference:
            return inputs, None
        set_tf32(entry.tf32)
        with torch.no_grad():
            outputs = output_tensors(call_stage("forward", entry.model, *inputs))
        return inputs, outputs

    def trial(self, entry, k, reference=True):
        """Trial k's (inputs, expected outputs or None): kept, or made now (its inputs alone when `reference` is
        false)."""
        if entry.trials is not None:
            return entry.trials[k]
        with self.task_code.making(entry.tf32):
            self.counts["made_on_request"] += 1
            return self._make(entry, k, reference)

    def _timing_set(self, entry, k, reference):
        """Timing set k made from its seed: (inputs, the reference's outputs or None)."""
        if k >= len(entry.timing_seeds):
            raise TaskError("server", f"timing set {k} has no seed (the task has {len(entry.timing_seeds)})")
        with self.task_code.making(entry.tf32):
            return self._make(entry, k, reference, entry.timing_seeds)

    def timed_sets(self, entry, source, count):
        """The timed calls' first `count` input sets: the prepared task's timing sets ("timing": made from their
        seeds), or its first trials' inputs ("trials"); kept with the task."""
        with entry.sets_lock:
            if entry.sets is None or entry.sets[0] != source or len(entry.sets[1]) < count:
                if source == "timing":
                    made = [self._timing_set(entry, k, reference=False)[0] for k in range(count)]
                    with self.lock:
                        entry.bytes += sum(_nbytes(m) for m in made)
                else:
                    made = [self.trial(entry, k, reference=False)[0] for k in range(count)]
                entry.sets = (source, made)
            return entry.sets[1][:count]

    def timed_set_expected(self, entry, source, k):
        """The reference's outputs for timed set k: the prepared timing set's (made from its seed) or trial k's; kept
        with the task."""
        with entry.sets_lock:
            if (source, k) not in entry.set_expected:
                if source == "timing":
                    made = self._timing_set(entry, k, reference=True)[1]
                    with self.lock:
                        entry.bytes += _nbytes(made)
                else:
                    made = self.trial(entry, k)[1]
                entry.set_expected[(source, k)] = made
            return entry.set_expected[(source, k)]

    def held_out(self, entry, k):
        """Held-out set k (catalog C1: other shapes, the same model; or the trivial-output guard's): its inputs and
        the reference's outputs, made from the recipe prepare kept in the task's folder (kept_held_out_sets.json, read
        here in trusted code; the candidate may not); kept with the task."""
        with entry.sets_lock:
            if k not in entry.held:
                if entry.held_recipes is None:
                    path = os.path.join(entry.prepared, HELD_OUT_SETS)
                    try:
                        with open(path) as f:
                            entry.held_recipes = json.load(f)
                    except (OSError, ValueError) as e:
                        raise TaskError("server", f"cannot read the held-out sets' recipes {path}: {e}: remove the "
                                        "prepared folder (or empty the cache: `anvil cache prune --max-size 0`) and "
                                        "evaluate again") from e
                if not 0 <= k < len(entry.held_recipes):
                    raise TaskError("server", f"held-out set {k} has no recipe (the task has "
                                    f"{len(entry.held_recipes)})")
                with self.task_code.making(entry.tf32):
                    set_tf32(entry.tf32)
                    with torch.no_grad():
                        made = held_out_set(entry.get_inputs, entry.held_recipes[k], self.device,
                                            lambda inputs: output_tensors(call_stage("forward", entry.model, *inputs)))
                with self.lock:
                    entry.bytes += sum(_nbytes(m) for m in made)
                entry.held[k] = made
            return entry.held[k]

    def compiling(self, fn):
        """fn() on the thread that compiles (self.dynamo), under task code; its result. What that thread waited there,
        behind its other work and for task code, is this thread's wait too."""
        submitted = time.monotonic()

        def under_task_code():
            queued = (time.monotonic() - submitted) * 1000
            began = self.task_code.waited_ms()
            with self.task_code:
                result = fn()
            return result, queued + self.task_code.waited_ms() - began

        result, waited_ms = self.dynamo.submit(under_task_code).result()
        self.task_code.add(waited_ms)
        return result

    def warm_compiler(self):
        """torch.compile's modules imported now, on the thread that compiles (2.4 s on the CPU machine:
        bench/scripts/warm_compiler_cpu.py; the run's first compile baseline paid it, 3.4-6.3 s on the H100 host:
        bench/results/all_problems_h100_call8.md). A baseline's compile asked meanwhile waits for it there."""
        self.compiler = self.dynamo.submit(_import_compiler)

    def stats(self):
        with self.lock:
            return dict(self.counts, tasks=len(self.entries), kept_bytes=self.kept_bytes(),
                        in_use_bytes=self.in_use_bytes(), budget_bytes=self.budget,
                        compiler_imported=self.compiler is not None and self.compiler.done(),
                        lends=self.task_code.lends)


def _import_compiler():
    for name in ("torch._dynamo", "torch._inductor.compile_fx"):
        importlib.import_module(name)


def _build_reference(module, entry, device):
    """The task's Model as prepare builds it, its __init__ under the init seed, and where that ran (`init_on`,
    task_worker.reference_model)."""
    missing = [n for n in ("Model", "get_init_inputs") if not hasattr(module, n)]
    if missing:
        raise TaskError("missing", f"{os.path.basename(entry.path)} does not define {', '.join(missing)}")
    model, _, init_on = reference_model(module, device, entry.init_seed, entry.tf32)
    return model, init_on
