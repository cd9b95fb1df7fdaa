"""The candidate side (docs/protocol.md): runs untrusted code in a child process.

The engine starts this in a fresh process per candidate and phase; whatever the
candidate does here (crash, hang, exit) is observed from outside. It gets copies
of the inputs and never sees reference outputs or seeds.
"""

import argparse
import contextlib
import hashlib
import inspect
import json
import math
import os
import signal
import sys
import time
import traceback

import torch

from anvil_py import tensor_io
from anvil_py.forward_trace import ForwardTrace, OpObserver
from anvil_py.kernel_trace import KernelTrace
from anvil_py.model_init import build_model_new, construct_for_extraction
from anvil_py.native_model import NativeModel
from anvil_py.no_exec import forbid_exec
from anvil_py.process_starts import refuse_process_starts
from anvil_py.report_channel import ReportChannel
from anvil_py.tamper_guard import TamperGuard
from anvil_py.task_loader import TaskError, call_stage, load_module
from anvil_py.timed_calls import timed_calls
from anvil_py.timing import CallClock, Timer
from anvil_py.trial_channel import ChannelError, OutputUnreadable, TrialData
from anvil_py.worker_outputs import check_outputs, unreadable_outputs

EXIT_CANDIDATE_ERROR = 3
# How long the extraction lets forward run on placeholder inputs (_forward_for_extraction).
_EXTRACTION_FORWARD_SECONDS = 5
# Inputs up to this many elements are real zeros on the CPU for that forward; larger ones meta tensors.
_EXTRACTION_CPU_ELEMENTS = 1 << 24
# A trial's outputs from this many bytes on: what torch keeps of them after the trial goes back to the device (the
# server makes the next trial's buffers there); below, the next trial reuses it.
LARGE_OUTPUTS = 256 << 20
# ---------------------------------------------------------------- kernelbench
def _listify(x):
    if x is None:
        return []
    return [os.fspath(x)] if isinstance(x, (str, os.PathLike)) else [os.fspath(v) for v in x]


# What of a load_inline call decides its build: everything but its name. The same arguments under another name (a
# uuid per process) find the same build through their key.
_BUILD_ARGUMENTS = ("cpp_sources", "cuda_sources", "functions", "extra_cflags", "extra_cuda_cflags", "extra_ldflags",
                    "extra_include_paths", "with_cuda")


def _check_build_arguments(a, functions):
    """What anvil records of a load_inline call must be what torch documents: text, lists of text, a flag. A NaN or
    an object there would reach anvil's own records (their JSON) and make the candidate's mistake look like
    anvil's: it fails the call, as a wrong argument to torch's would."""
    def strings(name, value):
        if value is None or isinstance(value, (str, os.PathLike)):
            return
        if not isinstance(value, (list, tuple)) or not all(isinstance(x, (str, os.PathLike)) for x in value):
            raise TypeError(f"load_inline({name}=...): anvil takes a string or a list of strings, not {value!r:.80}")
    if not isinstance(a["name"], str):
        raise TypeError(f"load_inline(name={a['name']!r:.80}): the name must be a string")
    for name in ("cpp_sources", "cuda_sources", "extra_cflags", "extra_cuda_cflags", "extra_ldflags",
                 "extra_include_paths"):
        strings(name, a[name])
    if isinstance(functions, dict):
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in functions.items()):
            raise TypeError("load_inline(functions={...}): anvil takes names and docstrings as strings")
    elif functions is not None:
        strings("functions", functions)
    if a["with_cuda"] not in (None, True, False) or isinstance(a["with_cuda"], float):
        raise TypeError(f"load_inline(with_cuda={a['with_cuda']!r:.80}): anvil takes True, False or None")


def _extension_call(signature, args, kwargs):
    """A load_inline call's arguments as anvil records them (docs/protocol.md, extract), bound to torch's own
    signature (positional arguments mean what they mean to torch), with `key`: a hash of all but the name."""
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    a = bound.arguments
    functions = [a["functions"]] if isinstance(a["functions"], str) else a["functions"]
    if functions is not None and not isinstance(functions, dict):
        functions = list(functions)
    _check_build_arguments(a, functions)
    call = {"name": a["name"], "cpp_sources": _listify(a["cpp_sources"]), "cuda_sources": _listify(a["cuda_sources"]),
            "functions": functions, "extra_cflags": _listify(a["extra_cflags"]),
            "extra_cuda_cflags": _listify(a["extra_cuda_cflags"]), "extra_ldflags": _listify(a["extra_ldflags"]),
            "extra_include_paths": _listify(a["extra_include_paths"]), "with_cuda": a["with_cuda"]}
    keyed = json.dumps({k: call[k] for k in _BUILD_ARGUMENTS}, sort_keys=True, default=str)
    call["key"] = hashlib.sha256(keyed.encode()).hexdigest()
    return call, a.get("is_python_module", True)


class _Unbuilt:
    """Stands in for an extension while sources are being extracted. `called` says whether code called one."""

    called = []

    def __init__(self, name):
        self._name = name

    def __getattr__(self, attr):
        def unavailable(*_, **__):
            _Unbuilt.called.append(self._name)
            raise RuntimeError(f"extension {self._name} is not built during extraction")
        return unavailable


def _record_extensions(recorded, signature):
    def load_inline(*args, **kwargs):
        call, _ = _extension_call(signature, args, kwargs)
        # A lazy build seen twice (at import and in forward) is one build.
        if any(r["key"] == call["key"] and r["name"].startswith(call["name"]) for r in recorded):
            return _Unbuilt(call["name"])
        # One name for other sources: torch builds the second as name_v1 (both load); so does anvil, and the run
        # finds each by its key.
        taken = {r["name"] for r in recorded}
        name, version = call["name"], 0
        while name in taken:
            version += 1
            name = f"{call['name']}_v{version}"
        call["name"] = name
        recorded.append(call)
        return _Unbuilt(name)
    return load_inline


def _prebuilt_extensions(builds, signature):
    import importlib.machinery
    import importlib.util

    loaded = {}

    def load_inline(*args, **kwargs):
        call, is_python_module = _extension_call(signature, args, kwargs)
        name = call["name"]
        # By its sources first: the build the extraction recorded for them (under a name of its own: a version
        # of a name used twice, the extraction's uuid), which its module initializes under.
        if call["key"] in builds.get("keys", {}):
            name = builds["keys"][call["key"]]
        path = builds.get("extensions", {}).get(name)
        if path is None:
            raise RuntimeError(f"extension {call['name']!r} was not built by anvil's compile gate: anvil builds "
                               "what load_inline is called with while the module is imported, ModelNew is built and "
                               "forward runs once on placeholder inputs; build it there, with these sources")
        if name in loaded:
            return loaded[name]
        if not is_python_module:
            # Ops registered with TORCH_LIBRARY, called through torch.ops: torch loads the library and returns its
            # path (torch.utils.cpp_extension.load_inline does the same).
            torch.ops.load_library(path)
            loaded[name] = path
            return path
        loader = importlib.machinery.ExtensionFileLoader(name, path)
        spec = importlib.util.spec_from_file_location(name, path, loader=loader)
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
        loaded[name] = module
        return module
    return load_inline


def _patch_load_inline(make):
    """Replaces torch's load_inline (once per process) by make(torch's own signature). anvil builds the extensions,
    so ninja is there as far as a candidate asks (torch's check would start `ninja --version`)."""
    import torch.utils.cpp_extension as ce
    ce.load_inline = make(inspect.signature(ce.load_inline))
    ce.is_ninja_available = lambda: True
    ce.verify_ninja_availability = lambda: None


def _load_candidate(path):
    try:
        return load_module(path, "anvil_candidate")
    except TaskError as e:
        e.stage = "import"
        raise


def _construct_for_extraction(module, spec, recorded):
    """ModelNew built once (model_init.construct_for_extraction) and its forward called once on placeholders, so that
    load_inline calls made in __init__ or on the first call are recorded too."""
    model = construct_for_extraction(module, spec, recorded)
    if model is not None:
        _forward_for_extraction(model, spec.get("inputs"))


class _OutOfTime(BaseException):
    pass


def _forward_for_extraction(model, described):
    """forward once on placeholders of the task's inputs (meta tensors: shapes and dtypes, no values), so that an
    extension built lazily, on the first call, is recorded as well. What it raises is ignored: no extension is
    built yet, so calling one raises anyway. A forward still running after a few seconds is stopped."""
    if described is None:
        return
    small = sum(math.prod(d["shape"]) for d in described if "shape" in d) <= _EXTRACTION_CPU_ELEMENTS

    def placeholders(device):
        return [tensor_io.from_json_value(d["scalar"]) if "scalar" in d else
                torch.zeros(d["shape"], dtype=tensor_io.dtype_from_name(d["dtype"]), device=device) for d in described]

    def out_of_time(*_):
        raise _OutOfTime()

    # Small inputs as real zeros on the CPU (a forward that checks its device first, `if x.device.type != "cpu"`,
    # still gets to its build), then on the meta device.
    for device in ("cpu", "meta") if small else ("meta",):
        previous = signal.signal(signal.SIGALRM, out_of_time)
        signal.setitimer(signal.ITIMER_REAL, _EXTRACTION_FORWARD_SECONDS)
        try:
            with torch.no_grad():
                model(*placeholders(device))
        except BaseException:  # noqa: BLE001 - the run gate calls forward for real and reports what it does
            pass
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)


def warm_meta():
    """The first op on the meta device imports what torch's meta kernels need (sympy and 900 modules: 0.65 s on the
    CPU machine): done in the worker's own start, not in the candidate's deadline (the extraction's forward on
    placeholders runs on meta tensors)."""
    torch.zeros(1, device="meta").relu()


def _announce_ready(fd):
    """anvil's deadline counts from here: what came before was the worker's own start (its imports)."""
    if fd is not None:
        os.write(fd, b"r")
        os.close(fd)


def extract(args):
    warm_meta()
    _announce_ready(args.ready_fd)
    recorded = []
    _patch_load_inline(lambda sig: _record_extensions(recorded, sig))
    guard = TamperGuard(None)
    problem = None
    try:
        try:
            module = _load_candidate(args.candidate)
        except TaskError as e:
            if not (recorded and _Unbuilt.called):
                raise
            # A module that calls its extension at import (a self-test) stops there while nothing is built: what
            # it defined up to that point is used here, and the run gate imports it again, with its extensions.
            module = sys.modules.get("anvil_candidate")
        if args.init:
            with open(args.init) as f:
                _construct_for_extraction(module, json.load(f), recorded)
    except TaskError as e:
        problem = {"stage": e.stage, "message": e.message, "traceback": e.traceback}
    # What importing and building it replaced is decided here, before anything is compiled.
    tampered = {"changed": guard.changes(), "when": "while importing, building ModelNew and calling forward once"}
    record = {"extensions": recorded, "error": problem, "tampered": tampered if tampered["changed"] else None}
    try:
        text = json.dumps(record, allow_nan=False)
    except (TypeError, ValueError) as e:
        # Values of the candidate's that JSON cannot hold: its import's failure, said as such.
        text = json.dumps({"extensions": [], "tampered": record["tampered"],
                           "error": {"stage": "import", "message": f"what the candidate passed to load_inline "
                                     f"cannot be recorded: {e}", "traceback": ""}}, default=str)
    with open(args.out, "w") as f:
        f.write(text)
    return 0


# ---------------------------------------------------------------- run
def _read_spec(prepared):
    with open(os.path.join(prepared, "spec.json")) as f:
        return json.load(f)


def _native_params(spec, device, served):
    """The reference's parameters then buffers, in the spec's order, from the task server's weights (`served`:
    trial_channel.receive_weights)."""
    names = [p["name"] for p in spec.get("params", [])]
    weights = served[0] if served is not None else {}
    missing = [n for n in names if n not in weights]
    if missing:
        raise ChannelError(f"the task server sent no weight named {missing[0]!r} (the task's spec lists "
                           f"{len(names)}): anvil's fault, not the candidate's")
    return [weights[n].to(device) for n in names]


def _build_callable(args, spec, device, data):
    builds = {}
    if args.builds:
        with open(args.builds) as f:
            builds = json.load(f)
    # The reference's weights from the task server (docs/protocol.md, "weights"), asked for before the candidate's
    # code loads.
    served = data.weights(device) if data.offers_weights else None
    if args.format == "native":
        return NativeModel(builds["native"], spec, _native_params(spec, device, served), device)
    _patch_load_inline(lambda sig: _prebuilt_extensions(builds, sig))
    module = _load_candidate(args.candidate)
    return build_model_new(module, spec, device, served, data.init_on)


def _held_out_trials(model, device, timer, args, trace, ops, data):
    """Catalog C1: the task's held-out input sets (other shapes, same model) from the task server, each forward's
    outputs into its buffers, compared there. Native candidates are built for the spec's shapes and skip them."""
    for k in range(data.held_out if data.compares else 0):
        inputs = data.inputs("held_out", k, device)

        def forward():
            begin = trace.now() if trace else 0
            with ops.forward(f"held-out set {k}"):
                out = model(*inputs)
            timer.sync()
            if trace:
                trace.mark(f"held_out_{k}", begin, trace.now())
            return out

        try:
            outputs = check_outputs(call_stage("forward", forward), k)
        except TaskError as err:
            err.message = f"on held-out input set {k} (shapes the benchmark does not show): {err.message}"
            raise
        finally:
            ops.checkpoint(f"held-out set {k}")
            ops.write(args.out, args.report)
        try:
            data.done(k, outputs, "held_out")
        except OutputUnreadable as e:
            raise unreadable_outputs(args, f"held_out_{k}", e.names) from None


def _timing_sets(device, args, data):
    """(warm, sets): inputs for the warmup and the timed calls' sets, from the task server."""
    if data.sets:
        # From the task server: warmup on a fresh copy of trial 0's inputs; each timed call's own buffers, which the
        # server fills after its `ready` (on the CPU: nothing of a set here before its call), or copies of the sets
        # (docs/protocol.md, "timed sets").
        warm = data.inputs("timing", 0, device)
        return warm, [None] * data.sets if data.sets_written else [data.timed_set(k, device) for k in range(data.sets)]
    # A session without timed sets: fresh copies of the trials' inputs.
    return None, [data.inputs("timing", k, device) for k in range(min(max(args.recheck_sets, 1), data.trials))]


class _Timeline:
    """The phases of this process (RunGate::phase_seconds), measured from anvil's spawn (ANVIL_SPAWN_NS)."""

    def __init__(self):
        self.phases = {}
        self.last = time.time_ns()
        spawn = os.environ.get("ANVIL_SPAWN_NS")
        if spawn and spawn.isdigit():
            self.phases["start"] = max(self.last - int(spawn), 0) / 1e9

    def lap(self, phase):
        now = time.time_ns()
        self.phases[phase] = (now - self.last) / 1e9
        self.last = now

    def write(self, out):
        with open(os.path.join(out, "timeline.json"), "w") as f:
            json.dump(self.phases, f)


def run(args):
    timeline = _Timeline()
    device = torch.device(args.device)
    # The kernel trace starts before the candidate's code is loaded (anvil asks for it on CUDA).
    trace = KernelTrace(args.trace_lib) if args.trace_lib else None
    if device.type == "cuda":
        torch.zeros(1, device=device)  # The context, so that its cost is not the model's.
        timeline.lap("cuda_init")
    # The timer (compiled: libanvil_timer.so) is loaded before the candidate's code can change what loads.
    timer = Timer(device, flush_after_go=args.sets_written, trace=trace)
    # anvil's report channel, before any candidate code: seals of what the worker writes, what its traces see.
    args.report = ReportChannel(args.report_fd) if args.report_fd is not None else None
    timer.watch(args.report_fd)
    # Counting every op from C++ starts before the candidate's code registers its own (and before the guard's
    # fingerprints: the observer puts its refusal in place of RecordFunction's switch).
    observer = OpObserver.start() if args.format == "kernelbench" else None
    guard = TamperGuard(args.out, args.report)
    _announce_ready(args.ready_fd)
    # The task server's session (docs/protocol.md, "trial data"), opened before the candidate's code runs: each
    # trial's inputs as memfds of their own (on cuda, device buffers).
    data = TrialData(args.data_fd)
    if not data.compares:  # The outputs have nowhere else to go (docs/protocol.md, "trial data").
        raise ChannelError("anvil's task server does not compare this session's outputs: anvil's fault, not the "
                           "candidate's")
    spec = _read_spec(args.prepared)
    model = _build_callable(args, spec, device, data)
    guard.check("after loading the candidate")
    timeline.lap("load")
    # aten ops and host transfers, every trial
    ops = ForwardTrace(observer) if args.format == "kernelbench" else None
    with torch.no_grad():
        for k in range(data.trials):
            inputs = data.inputs("trial", k, device)

            def forward():
                begin = trace.now() if trace else 0
                with ops.forward(f"trial {k}") if ops is not None else contextlib.nullcontext():
                    out = model(*inputs)
                timer.sync()  # Kernel errors surface here: they belong to the forward stage.
                if trace:
                    trace.mark(f"trial_{k}", begin, trace.now())
                return out

            try:
                result = call_stage("forward", forward)
            finally:
                if ops is not None:
                    ops.checkpoint(f"trial {k}")
                    ops.write(args.out, args.report)
            if type(model) is NativeModel:
                model.check_guards(f"trial {k}")
            guard.check(f"after trial {k}")
            outputs = check_outputs(result, k)
            # Into the task server's buffers, compared on its side (docs/protocol.md, "trial data").
            try:
                data.done(k, outputs)
            except OutputUnreadable as e:
                raise unreadable_outputs(args, f"trial_{k}", e.names) from None
            # Compared: the trial's tensors go before the server makes the next trial's (held, its inputs' buffers
            # stayed on the device beside the next ones: GBs on multi-GB tasks), and on a GPU what torch keeps of
            # large outputs goes back to the device, where the server makes the next trial's buffers.
            large = sum(o.numel() * o.element_size() for o in outputs if isinstance(o, torch.Tensor)) >= LARGE_OUTPUTS
            inputs = result = outputs = None
            if large and device.type == "cuda":
                torch.cuda.empty_cache()
        if args.format == "kernelbench":
            _held_out_trials(model, device, timer, args, trace, ops, data)
            guard.check("after the held-out sets")
        inputs = result = outputs = None  # The last trial's tensors (GBs on some tasks) are not needed any more.
        timeline.lap("trials")
        timeline.write(args.out)
        # The timed calls, in this process when anvil asks for them; their times reach anvil through its call
        # clock only.
        clock = CallClock(args.clock_fds) if args.clock_fds else None
        if clock:
            # The timing sets go onto the device while anvil compares the trials.
            clock.announce_trials()
            warm, sets = _timing_sets(device, args, data)
            timer.sync()
            timeline.lap("perf_inputs")
        traced = clock.await_perf() if clock else None
        if traced is not None:
            timeline.lap("trials_wait")
            call_inputs = data.call_inputs if data.sets_written else None
            recheck_to = data.recheck if data.rechecks else None
            timed_calls(model, warm, sets, timer, args, clock, trace, traced, timeline, guard, ops, call_inputs,
                        recheck_to)
            if trace:
                trace.write(os.path.join(args.out, "kernel_trace.tsv"))
                if args.report is not None:
                    args.report.seal_file(args.out, "kernel_trace.tsv")
                timeline.lap("trace_write")
            timeline.write(args.out)
    return 0


def main(argv=None):
    # Before any candidate code: an exec'd worker's sandbox let its own exec through (anvil_py/no_exec.py), and the
    # process starts library code makes fail softly (anvil_py/process_starts.py).
    forbid_exec()
    refuse_process_starts()
    parser = argparse.ArgumentParser(prog="anvil_py.candidate_worker")
    sub = parser.add_subparsers(dest="command", required=True)
    e = sub.add_parser("extract")
    e.add_argument("--candidate", required=True)
    e.add_argument("--out", required=True)
    e.add_argument("--init", help="the task's init arguments (task_worker init): ModelNew is built with them")
    e.add_argument("--ready-fd", type=int, help="written to once the worker is ready to import the candidate: the "
                   "extraction's deadline counts from then")
    r = sub.add_parser("run")
    r.add_argument("--candidate", required=True)
    r.add_argument("--format", choices=["kernelbench", "native"], required=True)
    r.add_argument("--prepared", required=True)
    r.add_argument("--device", default="cpu")
    r.add_argument("--out", required=True)
    r.add_argument("--builds")
    r.add_argument("--clock-fds", help="GO,DONE descriptors of anvil's call clock: the timed calls follow the "
                   "trials when anvil asks (docs/protocol.md)")
    r.add_argument("--trace-lib", help="libanvil_trace.so: record every kernel into OUT/kernel_trace.tsv "
                   "(src/integrity/kernel_trace.h)")
    r.add_argument("--ready-fd", type=int, help="written to once the worker is ready to load the candidate: the "
                   "run's deadline counts from then")
    r.add_argument("--report-fd", type=int, help="anvil's report channel (anvil_py/report_channel.py): seals of the "
                   "outputs written, what the traces and the tamper guard found")
    r.add_argument("--data-fd", type=int, required=True, help="a task server session (anvil_py/trial_channel.py): "
                   "the trials' inputs come from there")
    r.add_argument("--warmup", type=int, default=3)
    r.add_argument("--iters", type=int, default=20)
    r.add_argument("--sets-written", action="store_true",
                   help="the task server writes each timed call's inputs after its `ready`: on CUDA the L2 is "
                        "flushed after anvil's go")
    r.add_argument("--recheck-sets", type=int, default=0,
                   help="rotate the timed calls through this many trial input sets and write each one's last output")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True) if args.command == "run" else None
    try:
        return extract(args) if args.command == "extract" else run(args)
    except TaskError as err:
        if args.command == "run":
            with open(os.path.join(args.out, "error.json"), "w") as f:
                json.dump({"stage": err.stage, "message": err.message, "traceback": err.traceback}, f)
        print(f"anvil: candidate error ({err.stage}): {err.message}", file=sys.stderr)
        if err.traceback:
            print(err.traceback, file=sys.stderr)
        return EXIT_CANDIDATE_ERROR
    except BaseException as err:  # noqa: BLE001 - reported as a candidate failure
        if args.command != "run":
            raise
        with open(os.path.join(args.out, "error.json"), "w") as f:
            json.dump({"stage": "run", "message": f"{type(err).__name__}: {err}",
                       "traceback": traceback.format_exc()}, f)
        return EXIT_CANDIDATE_ERROR


if __name__ == "__main__":
    code = main()
    # Everything it wrote is closed: skip the interpreter's teardown (torch's and the CUDA context's, up to a
    # second per candidate), as the zygote's children do.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code or 0)
