"""The trusted task side (docs/protocol.md): spec, reference outputs, baselines.

Runs only task code (the reference), never candidate code. Seeds arrive on the
command line from the engine and are never written where a candidate can read them.
"""

import argparse
import contextlib
import errno
import hashlib
import json
import os
import sys
import time

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from anvil_py import tensor_io, trivial_guard
from anvil_py.device_work import WorkClock
from anvil_py.model_init import build_under_seed, on_device_or_cpu
from anvil_py.task_loader import TaskError, call_stage, load_task
from anvil_py.timing import Timer

EXIT_TASK_ERROR = 3
EXIT_NO_SPACE = 4  # this worker's own write found the disk full: the machine's failure (src/tasks/prepare.cc)


class _OpTrace(TorchDispatchMode):
    """Records every aten op the reference dispatches, with tensor shapes."""

    def __init__(self, limit=2000):
        super().__init__()
        self.ops = []
        self.limit = limit

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if len(self.ops) < self.limit:
            shapes = lambda xs: [list(x.shape) for x in xs if isinstance(x, torch.Tensor)]
            outs = out if isinstance(out, (tuple, list)) else [out]
            self.ops.append({"op": str(func), "in_shapes": shapes(args), "out_shapes": shapes(outs)})
        return out


def _to_device(values, device):
    return [v.to(device) if isinstance(v, torch.Tensor) else v for v in values]


def set_tf32(tf32):
    """tf32 "off" (policy musacoder): the reference computes in true fp32, no TF32 in cuDNN convolutions or
    matmuls (torch's conv default is TF32 on, which would make an exact fp32 kernel fail a 1e-4 tolerance).
    "default" (policies kernelbench*): torch's own settings, as KernelBench's harness leaves them. Baselines are
    timed the same way. "default" puts back the settings the process started with: the task server computes
    references of several policies in one process."""
    cudnn, matmul = (False, False) if tf32 == "off" else _TORCH_TF32
    torch.backends.cudnn.allow_tf32 = cudnn
    torch.backends.cuda.matmul.allow_tf32 = matmul


# torch's TF32 settings as this process started (its defaults, or what its environment made them).
_TORCH_TF32 = (torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32)


def init_inputs_under(get_init_inputs, init_seed):
    torch.manual_seed(init_seed)
    init_inputs = call_stage("get_init_inputs", get_init_inputs)
    if not isinstance(init_inputs, (list, tuple)):
        raise TaskError("get_init_inputs", "get_init_inputs() must return a list or tuple")
    return init_inputs


def reference_model(module, device, init_seed, tf32="off"):
    """(the task module's Model on `device`, its init inputs, where its __init__ ran): get_init_inputs() and Model's
    __init__ under the init seed, on `device` itself or on the CPU where it fails there (model_init.on_device_or_cpu;
    KernelBench builds on the CPU), then moved to `device`."""
    set_tf32(tf32)
    init_inputs = init_inputs_under(module.get_init_inputs, init_seed)
    model, init_on = on_device_or_cpu(lambda place: build_under_seed(module.Model, init_inputs, init_seed, place),
                                      torch.device(device).type)
    model = call_stage("init", lambda: model.to(device))
    return model, list(init_inputs), init_on


def build_model(task_path, device, init_seed, tf32="off"):
    set_tf32(tf32)
    module, _, get_inputs, _ = load_task(task_path)
    model, init_inputs, _ = reference_model(module, device, init_seed, tf32)
    return model, get_inputs, init_inputs


def make_inputs(get_inputs, seed, device):
    """get_inputs() under `seed`, its tensors created directly on `device` (KernelBench makes them on the CPU
    and copies; on a GPU that costs seconds per GB for the multi-GB level-1 inputs)."""
    torch.manual_seed(seed)
    if torch.device(device).type == "cuda":
        torch.cuda.manual_seed(seed)
    with torch.device(device):
        inputs = call_stage("get_inputs", get_inputs)
    if not isinstance(inputs, (list, tuple)):
        raise TaskError("get_inputs", "get_inputs() must return a list or tuple")
    return _to_device(list(inputs), device)


HELD_OUT_SETS = "kept_held_out_sets.json"  # In the prepared folder, secret like the trial seeds (src/tasks/prepare.cc).


@contextlib.contextmanager
def globals_changed(module_globals, overrides):
    """A held-out set's module globals meanwhile: each name of `overrides` set to its value ({"use": NAME} stands for
    the global NAME, so a set can swap get_inputs for another input maker of the task)."""
    saved = {n: module_globals[n] for n in overrides}
    module_globals.update({n: module_globals[v["use"]] if isinstance(v, dict) else v for n, v in overrides.items()})
    try:
        yield module_globals
    finally:
        module_globals.update(saved)


def held_out_set(get_inputs, recipe, device, forward):
    """A held-out set from its recipe (kept_held_out_sets.json): (inputs, forward(inputs)), the inputs get_inputs() makes
    under the recipe's seed, "transform"ed (trivial_guard.transformed), with the module globals of its "globals"
    changed throughout. Prepare and the task server make a set alike; neither writes it (the task server runs task
    code one call at a time, so the globals change for this set alone)."""
    with globals_changed(get_inputs.__globals__, recipe.get("globals") or {}) as module_globals:
        inputs = make_inputs(module_globals["get_inputs"], int(recipe["seed"]), device)
        if recipe.get("transform"):
            inputs = trivial_guard.transformed(inputs, recipe["transform"])
        return inputs, forward(inputs)


def output_tensors(result):
    """A forward's result as its flat list of output tensors; TaskError for anything else."""
    outputs = tensor_io.flatten_outputs(result)
    for i, o in enumerate(outputs):
        if not isinstance(o, torch.Tensor):
            raise TaskError("output", f"forward output {i} is a {type(o).__name__}, not a tensor")
    return outputs


def timing_set_count(wanted, set_bytes, budget):
    """Sets for `wanted` timed calls of `set_bytes` each: all that fit in `budget`, but more than half of them (so
    the median comes from first sights) while they fit in 4x the budget, and at least one."""
    if wanted <= 0:
        return 0
    set_bytes = max(set_bytes, 1)
    count = min(wanted, max(budget // set_bytes, wanted // 2 + 1))
    return max(1, min(count, 4 * budget // set_bytes))


def _seconds_since_start():
    """Wall seconds since this process started (the interpreter, torch's import): /proc's clock ticks."""
    try:
        with open("/proc/self/stat") as f:
            started = int(f.read().rsplit(")", 1)[1].split()[19]) / os.sysconf("SC_CLK_TCK")
        with open("/proc/uptime") as f:
            return max(0.0, float(f.read().split()[0]) - started)
    except (OSError, ValueError, IndexError):
        return 0.0


class _Phases:
    """Wall milliseconds of prepare's phases, for spec.json's "prepare_ms" (where a slow preparation's time went)."""

    def __init__(self, device):
        self.device = torch.device(device)
        self.ms = {"start": round(_seconds_since_start() * 1e3, 1)}

    @contextlib.contextmanager
    def phase(self, name):
        t0 = time.perf_counter()
        try:
            yield
        finally:
            if self.device.type == "cuda":
                torch.cuda.synchronize(self.device)
            self.ms[name] = round(self.ms.get(name, 0.0) + (time.perf_counter() - t0) * 1e3, 1)


def prepare(args):
    device = torch.device(args.device)
    phases = _Phases(device)
    seeds = [int(s) for s in args.seeds.split(",") if s]
    with phases.phase("build"):
        model, get_inputs, init_inputs = build_model(args.task, device, args.init_seed, args.tf32)
    os.makedirs(args.out, exist_ok=True)

    # No weight is written (GBs for level 3): the task server builds the reference as here, its __init__ under the
    # init seed, and sends the candidate its weights (docs/protocol.md, "weights").

    spec = None
    streamed = False
    guard = json.loads(args.guard) if args.guard else None
    guards, trial0_inputs = [], None
    # No tensor of a trial or a timing set is written (the task server makes each again from its seed, on the
    # device): the trials still run here, for the spec and the guard.
    work = WorkClock(device)  # The device's work for the reference, in spec.json's "work_ms".
    with torch.no_grad():
        for k, seed in enumerate(seeds):
            with work.piece(), phases.phase("inputs"):
                inputs = make_inputs(get_inputs, seed, device)
            trace = _OpTrace() if k == 0 else None
            with work.piece(), phases.phase("forward"):
                if trace:
                    with trace:
                        result = call_stage("forward", model, *inputs)
                else:
                    result = call_stage("forward", model, *inputs)
            outputs = output_tensors(result)
            if guard is not None:
                with phases.phase("guard"):
                    if k == 0:
                        guards = trivial_guard.guards_for(outputs, guard["tolerance"], guard["nan_equal"])
                        trial0_inputs = inputs
                    for g in guards:
                        g.observe_trial(outputs[g.index], inputs)
            if k == 0:
                spec = _spec(args, model, init_inputs, inputs, outputs, trace.ops)
                trial_bytes = sum(t.numel() * t.element_size() for t in list(inputs) + outputs
                                  if isinstance(t, torch.Tensor))
                spec["trial_bytes"] = trial_bytes
                spec["trial_files"] = False
                if args.max_trial_bytes and trial_bytes > args.max_trial_bytes and len(seeds) > 1:
                    # Too big to keep every trial warm: the task server makes each when a candidate needs it.
                    spec["streamed"] = {"trial_bytes": trial_bytes}
                    with open(os.path.join(args.out, "seeds.json"), "w") as f:
                        json.dump(seeds, f)
                    streamed = True
                    break
        timing_seeds = [int(s) for s in args.timing_seeds.split(",") if s]
        if spec is not None and not streamed and timing_seeds:
            # The timed calls' own input sets (catalog B2): values no trial had, each with its reference outputs.
            count = timing_set_count(len(timing_seeds), trial_bytes, args.max_timing_bytes)
            spec["timing_sets"] = count
        recipes = []  # The held-out sets' recipes, in spec["held_out"]'s order.
        if spec is not None and not streamed and args.held_out:
            seed = int(args.held_out_seeds.split(",")[0]) if args.held_out_seeds else 0
            with phases.phase("held_out"):
                spec["held_out"], skipped = _held_out(args, model, get_inputs, init_inputs,
                                                      json.loads(args.held_out), seed, device, work, recipes)
            if skipped:
                spec["held_out_skipped"] = skipped
        if spec is not None and guard is not None:
            if streamed:
                spec["trivial_guard"] = {"skipped": "a streamed task (trials made when needed)"}
            else:
                with work.piece(), phases.phase("guard"):
                    _guard(args, spec, guards, model, get_inputs, trial0_inputs, seeds[0], device, recipes)
        if recipes:
            # Kept for the task server, which makes each set and the reference's outputs for it (no tensor written).
            with open(os.path.join(args.out, HELD_OUT_SETS), "w") as f:
                json.dump(recipes, f)
    if spec is not None:
        spec["work_ms"] = work.ms()
        spec["prepare_ms"] = phases.ms
    with open(os.path.join(args.out, "spec.json"), "w") as f:
        json.dump(spec, f, indent=1)


def _guard(args, spec, guards, model, get_inputs, trial0_inputs, trial0_seed, device, recipes):
    """The trivial-output guard's findings (anvil_py/trivial_guard.py) into the spec: tightened outputs, the
    held-out sets that tell a trivial output from the kernel (their recipes appended to `recipes`), or why the task
    is degenerate."""
    report = {}
    for g in guards:
        if g.tightened():
            passed = [f for f in trivial_guard.FORMS if g.base[f]]
            report[g.name] = {"atol_scale": g.scale, "why": f"{', '.join(passed)} passed every trial at atol "
                              f"{g.atol:g}, rtol {g.rtol:g} (the output's root mean square is {g.rms:.3g})"}
    spec["trivial_guard"] = report
    noisy = trivial_guard.noise(guards, model, trial0_inputs, output_tensors)
    for g in noisy:
        report[g.name]["noise"] = ("the reference in float64 differs from float32 beyond the tightened tolerance: "
                                   "the output is rounding noise")
    if noisy:
        g = noisy[0]
        spec["degenerate"] = f"{g.name}: {next(f for f in trivial_guard.FORMS if g.base[f])}"
        return
    seeds = [int(s) for s in args.guard_seeds.split(",") if s]
    degenerate, sets = trivial_guard.judge_more_sets(
        guards, lambda inputs: call_stage("forward", model, *inputs),
        lambda seed: make_inputs(get_inputs, seed, device), trial0_inputs, seeds, output_tensors)
    if degenerate:
        spec["degenerate"] = degenerate
        return
    held = spec.setdefault("held_out", [])
    for label, _, _, recipe in sets:
        held.append({"guard": label})
        recipes.append({"seed": trial0_seed, **recipe})


def init(args):
    """What ModelNew is built with (get_init_inputs() under the init seed), written before any device work: the
    candidate's sources are extracted from it while the reference is prepared on the device. Same values as
    spec.json's init_inputs (build_model computes them the same way, on the CPU)."""
    _, _, get_inputs, get_init_inputs = load_task(args.task)
    init_inputs = init_inputs_under(get_init_inputs, args.init_seed)
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"init_inputs": tensor_io.to_json_value(list(init_inputs)), "init_seed": args.init_seed,
                   "inputs": _placeholder_inputs(get_inputs, args.init_seed)}, f)
    os.replace(tmp, args.out)


def _placeholder_inputs(get_inputs, seed):
    """forward's inputs as the extraction's placeholders: get_inputs() on the meta device (shapes and dtypes, no
    memory, no values), each described as in spec.json; None where the task's get_inputs() cannot run there (it
    names a device, reads values)."""
    try:
        inputs = make_inputs(get_inputs, seed, "meta")
        return [tensor_io.describe(v, f"in{i}") for i, v in enumerate(inputs)]
    except Exception:  # noqa: BLE001 - the placeholders are optional; prepare reports the task's own problems
        return None


def _held_out(args, model, get_inputs, init_inputs, sets, seed, device, work, recipes):
    """Catalogs C1 and C2: for each set of module globals (the task's sidecar "held_out"), the inputs get_inputs()
    makes with those globals changed, tried on the reference (its recipe appended to `recipes`: the task server
    makes the set again, and nothing of it is written). A value {"use": NAME} stands for the module's global NAME,
    so a set can swap get_inputs for another input maker of the task (mixed structures: zeros, ill-conditioned
    blocks at random places). The model stays as it is: a set that would change get_init_inputs() is the task's
    error."""
    module_globals = get_inputs.__globals__
    get_init = module_globals.get("get_init_inputs")
    auto = sets == "auto"
    if auto:
        # Without a sidecar: one batch smaller than the benchmark's (a kernel sized for it, or for its multiples of
        # a tile, shows), where the task has a batch_size and the model does not depend on it.
        batch = module_globals.get("batch_size")
        if not isinstance(batch, int) or isinstance(batch, bool) or batch < 2:
            return [], "the task has no module global batch_size above 1"
        sets = [{"batch_size": batch - 1}]
    made, skipped = [], ""
    for k, overrides in enumerate(sets):
        described = ", ".join(f"{n}={v['use'] if isinstance(v, dict) else v}" for n, v in overrides.items())
        names = list(overrides) + [v["use"] for v in overrides.values() if isinstance(v, dict)]
        missing = [n for n in names if n not in module_globals]
        if missing:
            raise TaskError("held_out", f"held-out set {k} ({described}): the task has no module global "
                            f"{missing[0]!r}")
        recipe = {"globals": overrides, "seed": seed + k}
        try:
            if get_init is not None:
                with globals_changed(module_globals, overrides):
                    torch.manual_seed(args.init_seed)
                    init_changed = repr(list(call_stage("get_init_inputs", get_init))) != repr(list(init_inputs))
                if init_changed:
                    raise TaskError("held_out", f"held-out set {k} ({described}) changes get_init_inputs(): only "
                                    "the inputs may change, the model stays the benchmark's")
            with work.piece():  # The reference takes the set (the server makes it again for each comparison).
                held_out_set(get_inputs, recipe, device, lambda inputs: output_tensors(
                    call_stage("forward", model, *inputs)))
            made.append(overrides)
            recipes.append(recipe)
        except TaskError as e:
            if not auto:
                raise
            # A set the task did not ask for: the reference cannot take it (a state sized by the batch), so
            # there is none.
            skipped = f"{described}: {e.message.splitlines()[0] if e.message else e.stage}"
    return made, skipped


def _spec(args, model, init_inputs, inputs, outputs, ops):
    with open(args.task, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    params = [dict(tensor_io.describe(p, n), kind="parameter") for n, p in model.named_parameters()]
    params += [dict(tensor_io.describe(b, n), kind="buffer") for n, b in model.named_buffers()]
    scalars = {k: v for k, v in vars(model).items()
               if not k.startswith("_") and k != "training" and isinstance(v, (bool, int, float, str))}
    return {
        "version": 1,
        "task": {"name": os.path.splitext(os.path.basename(args.task))[0],
                 "path": os.path.abspath(args.task), "sha256": digest},
        "torch_version": torch.__version__, "device": args.device,
        "init_inputs": tensor_io.to_json_value(init_inputs),
        "inputs": [tensor_io.describe(v, f"in{i}") for i, v in enumerate(inputs)],
        "params": params,
        "outputs": [tensor_io.describe(o, f"out{i}") for i, o in enumerate(outputs)],
        "scalars": scalars,
        "ops": ops,
    }


def _await_turn(fd):
    """Says anvil that the set-up is over and waits for its word to time (docs/protocol.md); False: none came."""
    os.write(fd, b"r")
    word = os.read(fd, 1)
    os.close(fd)
    return word == b"g"


def compile_first_call(model, inputs, sync, lend=None):
    """torch.compile's baseline set up: (the compiled model, the seconds of its first call, synchronized with `sync`,
    and the graphs dynamo compiled for it: 0 when it compiled nothing new, the model run eagerly or code it compiled
    before in this process reused; docs/verdict.md, `compile_graphs`). `lend`: a context manager's factory entered
    while inductor compiles each graph of the first call (the task server lends its task code there)."""
    from torch._dynamo.utils import counters  # noqa: PLC0415 - dynamo loads only where a compile baseline runs

    backend, lending = "inductor", lend is not None
    if lend is not None:
        from torch._inductor.compile_fx import compile_fx  # noqa: PLC0415 - as torch.compile's "inductor" calls it

        def lending_inductor(graph, example_inputs):
            # A graph compiled again later (a guard failed in a timed call) lends nothing: the timed calls run alone.
            with lend() if lending else contextlib.nullcontext():
                return compile_fx(graph, example_inputs)

        backend = lending_inductor

    graphs = counters["stats"]["unique_graphs"]
    begin = time.perf_counter()
    fn = torch.compile(model, backend=backend)
    try:
        with torch.no_grad():
            fn(*inputs)
        sync()
    finally:
        lending = False  # Read by lending_inductor when it runs.
    return fn, time.perf_counter() - begin, int(counters["stats"]["unique_graphs"] - graphs)


def baseline(args):
    device = torch.device(args.device)
    model, get_inputs, _ = build_model(args.task, device, args.init_seed, args.tf32)
    # No trial's tensors on disk: trial 0's inputs from its seed (seeds.json for a streamed task).
    seeds = os.path.join(args.prepared, "seeds.json")
    if not os.path.exists(seeds):
        seeds = os.path.join(args.prepared, "kept_seeds.json")
    with open(seeds) as f:
        inputs = make_inputs(get_inputs, int(json.load(f)[0]), device)
    result = {"mode": args.mode, "times_ms": [], "error": None, "compile_seconds": None, "compile_graphs": None}
    fn = model
    timer = Timer(device)
    try:
        if args.mode == "compile":
            fn, result["compile_seconds"], result["compile_graphs"] = compile_first_call(model, inputs, timer.sync)
        timer.sync()
        if args.handshake_fd is not None and not _await_turn(args.handshake_fd):
            return  # anvil has gone: nothing to time for.
        with torch.no_grad():
            result["times_ms"] = timer.time(lambda: fn(*inputs), args.warmup, args.iters)
    except Exception as e:  # noqa: BLE001 - a baseline that cannot run is reported, not fatal
        result["error"] = f"{type(e).__name__}: {e}"
    with open(args.out, "w") as f:
        json.dump(result, f)


def build_info(args):
    """Compiler flags torch's own extension builder would use (docs/protocol.md)."""
    import sysconfig

    from torch.utils import cpp_extension as ce

    info = {
        "torch_version": torch.__version__,
        "python_include": sysconfig.get_path("include", scheme="posix_prefix"),
        "ext_suffix": sysconfig.get_config_var("EXT_SUFFIX") or ".so",
        "include_paths_cpu": ce.include_paths("cpu"),
        "include_paths_cuda": ce.include_paths("cuda"),
        "torch_lib": ce.TORCH_LIB_PATH,
        "cflags": ["-DTORCH_API_INCLUDE_EXTENSION_H", "-fPIC", "-std=c++17",
                   f"-D_GLIBCXX_USE_CXX11_ABI={int(torch._C._GLIBCXX_USE_CXX11_ABI)}"]
                  + list(getattr(ce, "_get_pybind11_abi_build_flags", lambda: [])()),
        "nvcc_flags": list(ce.COMMON_NVCC_FLAGS),
        "ldflags_cpu": [f"-L{ce.TORCH_LIB_PATH}", "-lc10", "-ltorch_cpu", "-ltorch", "-ltorch_python"],
        "ldflags_cuda": [f"-L{ce.TORCH_LIB_PATH}", "-lc10", "-lc10_cuda", "-ltorch_cpu", "-ltorch_cuda",
                         "-ltorch", "-ltorch_python"],
        "cuda_available": torch.cuda.is_available(),
        "python_paths": _python_paths(),
    }
    json.dump(info, sys.stdout)


def _python_paths():
    """Folders a candidate's Python needs to read (the sandbox allows these): the interpreter's prefixes and every
    import path, as given and resolved, except the working directory."""
    cwd = os.path.realpath(os.getcwd())
    seen = []
    for p in [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
              os.path.dirname(os.path.dirname(torch.__file__))] + list(sys.path):
        if not p:
            continue
        for q in (os.path.abspath(p), os.path.realpath(p)):
            if os.path.isdir(q) and q != cwd and q != "/" and q not in seen:
                seen.append(q)
    return seen


def main(argv=None):
    parser = argparse.ArgumentParser(prog="anvil_py.task_worker")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--task", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--device", default="cpu")
    p.add_argument("--seeds", required=True)
    p.add_argument("--init-seed", type=int, default=42)
    p.add_argument("--timing-seeds", default="", help="secret seeds of the timed calls' own input sets")
    p.add_argument("--held-out", default="",
                   help='JSON list of module-global overrides, one held-out input set each, or "auto" (JSON string): '
                        'one set with batch_size one smaller, where the reference takes it')
    p.add_argument("--held-out-seeds", default="", help="secret seed of the held-out input sets")
    p.add_argument("--max-timing-bytes", type=int, default=1 << 30,
                   help="bytes of timing sets to aim for (see timing_set_count)")
    p.add_argument("--max-trial-bytes", type=int, default=0,
                   help="above this many bytes per trial, keep no trial data (streamed mode)")
    p.add_argument("--guard", default="",
                   help='the trivial-output guard: JSON {"tolerance": {dtype: [atol, rtol]}, "nan_equal": bool}')
    p.add_argument("--guard-seeds", default="", help="secret seeds of the guard's extra input sets")
    tf32_help = "off: the reference in exact fp32; default: torch's TF32 settings as they are"
    p.add_argument("--tf32", choices=["off", "default"], default="off", help=tf32_help)
    b = sub.add_parser("baseline")
    b.add_argument("--task", required=True)
    b.add_argument("--prepared", required=True)
    b.add_argument("--device", default="cpu")
    b.add_argument("--mode", choices=["eager", "compile"], default="eager")
    b.add_argument("--warmup", type=int, default=3)
    b.add_argument("--iters", type=int, default=20)
    b.add_argument("--init-seed", type=int, default=42)
    b.add_argument("--out", required=True)
    b.add_argument("--handshake-fd", type=int, help="set up, write a byte here and time only after reading one back "
                   "(anvil gives the device alone for the timed calls only)")
    b.add_argument("--tf32", choices=["off", "default"], default="off", help=tf32_help)
    i = sub.add_parser("init")
    i.add_argument("--task", required=True)
    i.add_argument("--init-seed", type=int, default=42)
    i.add_argument("--out", required=True, help="JSON file: {init_inputs, init_seed}")
    sub.add_parser("build-info")
    args = parser.parse_args(argv)
    try:
        {"prepare": prepare, "baseline": baseline, "init": init, "build-info": build_info}[args.command](args)
    except TaskError as e:
        out = getattr(args, "out", None)
        error_json = {"prepare": lambda: os.path.join(out, "error.json"), "init": lambda: out + ".error.json"}
        if out and args.command in error_json:
            if args.command == "prepare":
                os.makedirs(out, exist_ok=True)
            with open(error_json[args.command](), "w") as f:
                json.dump({"stage": e.stage, "message": e.message, "traceback": e.traceback}, f)
        print(f"anvil: task error ({e.stage}): {e.message}", file=sys.stderr)
        return EXIT_TASK_ERROR
    except OSError as e:
        # The task's own code runs inside call_stage (a TaskError): an OSError here is one of this worker's writes.
        if e.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        print(f"anvil: no space left writing {e.filename or 'the prepared task'}: {e.strerror}", file=sys.stderr)
        return EXIT_NO_SPACE
    return 0


if __name__ == "__main__":
    sys.exit(main())
