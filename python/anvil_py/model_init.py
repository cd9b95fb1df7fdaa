"""How the candidate worker builds ModelNew (docs/protocol.md, run): with the task's init arguments under its init
seed, and with the reference's weights where the candidate keeps them under the reference's names.

KernelBench builds Model and ModelNew each under the same seed: a ModelNew that lays out its layers as Model does
gets Model's weights. anvil also gives them to a ModelNew whose layers are made in another order or initialized
another way (the reference's state dict, loaded over the parameters and buffers of the same names and shapes), unless
its __init__ computes on its parameters (folds a constant into a weight, keeps a weight transposed under its name):
those are its own values, as in KernelBench. A ModelNew whose parameters and buffers the reference's state dict covers
exactly, that keeps no other tensor and computes nothing in __init__, is built on the meta device and filled from the
state dict (a level-3 model skips seconds of random initialization on the CPU). The state dict is the one the task
server sends (docs/protocol.md, "Weights"): prepare writes no weight, and the trusted side builds the task's Model by
its __init__ under the init seed.
"""

import gc

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from anvil_py import tensor_io
from anvil_py.task_loader import TaskError, call_stage

# Ops that make or initialize a tensor in place (nn.init, a layer's reset_parameters): not a computation on it.
_INITIALIZERS = frozenset("""empty empty_strided empty_like zeros zeros_like ones ones_like full full_like fill_ zero_
    uniform_ normal_ random_ bernoulli_ exponential_ geometric_ log_normal_ cauchy_ randn rand randint randperm arange
    linspace scalar_tensor lift_fresh detach alias""".split())
_LOOSE_SCAN_LIMIT = 100000  # Objects visited when looking for tensors a module keeps outside its state.


class _InitRecorder(TorchDispatchMode):
    """The storages a constructor's ops read: those of every op but the initializers."""

    def __init__(self):
        super().__init__()
        self.read = set()
        self.ops = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func.__name__.split(".")[0] if hasattr(func, "__name__") else str(func)
        if name not in _INITIALIZERS:
            self.ops += 1
            for a in [*args, *(kwargs or {}).values()]:
                for t in a if isinstance(a, (list, tuple)) else (a,):
                    if isinstance(t, torch.Tensor) and t.device.type != "meta":
                        self.read.add(t.untyped_storage().data_ptr())
        return func(*args, **(kwargs or {}))


def _init_inputs(spec):
    return tensor_io.from_json_value(spec["init_inputs"])


def _construct(cls, init_inputs, init_seed, device_context, record):
    """cls(*init inputs) under the init seed (on `device_context`), recording its constructor's ops; the storages of
    the parameters it created (nn.Parameter's own constructor is watched while it runs)."""
    created = set()
    original = torch.nn.Parameter.__new__

    def watched(cls, data=None, requires_grad=True):
        p = original(cls, data, requires_grad)
        if p.device.type != "meta":
            created.add(p.untyped_storage().data_ptr())
        return p

    torch.nn.Parameter.__new__ = watched
    try:
        with record:
            model = build_under_seed(cls, init_inputs, init_seed, device_context)
    finally:
        torch.nn.Parameter.__new__ = original
    return model, created


def build_under_seed(cls, init_inputs, init_seed, device_type):
    """cls(*init_inputs) with every device's generator seeded by `init_seed`, its tensors made on `device_type`.
    TaskError stage "init" when it raises."""
    torch.manual_seed(init_seed)
    with torch.device(device_type):
        return call_stage("init", lambda: cls(*init_inputs))


def on_device_or_cpu(build, device_type, init_on=None):
    """(build(place), place): `place` is `init_on` where given (where the reference's __init__ ran), else
    `device_type`, or the CPU where build raises TaskError there (an __init__ that reads values). A level-3 model's
    random initialization takes seconds on the CPU (8 GB of 2_ShallowWideMLP: 16 s on a GPU host), ms on the device;
    the values differ from the CPU's, the same for every process that builds under the seed on that device."""
    place = init_on or device_type
    try:
        return build(place), place
    except TaskError:
        if init_on or place == "cpu":
            raise
        return build("cpu"), "cpu"


def holds_loose_tensors(model):
    """Whether a module keeps tensors outside its parameters and buffers — plain attributes, lists, dicts, objects of
    its own, functools.partial's arguments, anything reachable from them, its own parameters included (a holder of
    `linear.weight`): those get their values in __init__, or keep the objects a state dict loaded with assign=True
    replaces."""
    modules = {id(m) for m in model.modules()}
    seen = set()
    own = ("_parameters", "_buffers", "_modules")
    pending = [v for m in model.modules() for k, v in vars(m).items() if k not in own]
    while pending and len(seen) < _LOOSE_SCAN_LIMIT:
        obj = pending.pop()
        if id(obj) in seen or id(obj) in modules:
            continue
        seen.add(id(obj))
        if isinstance(obj, torch.Tensor):
            return True
        if isinstance(obj, (str, bytes, int, float, bool, type(None), type, torch.dtype, torch.device)):
            continue
        pending.extend(gc.get_referents(obj))
    return False


def _from_state(cls, init_inputs, init_seed, device, reference):
    """cls (ModelNew) on the meta device filled from the reference's state dict ({name: tensor}), or None where that
    would not be the model its __init__ makes (see the module's docstring)."""
    record = _InitRecorder()
    try:
        model, _ = _construct(cls, init_inputs, init_seed, "meta", record)
    except Exception:  # noqa: BLE001 - an __init__ that needs values: the usual way
        return None
    if not isinstance(model, torch.nn.Module) or record.ops or holds_loose_tensors(model):
        return None
    tensors = dict(model.named_parameters())
    tensors.update(dict(model.named_buffers()))
    if set(tensors) != set(reference) or any(
            t.shape != reference[k].shape or t.dtype != reference[k].dtype for k, t in tensors.items()):
        return None
    if torch.device(device).type == "cpu":
        # The served tensors themselves: views of this session's own weights buffer, which nothing else reads.
        model.load_state_dict(reference, strict=True, assign=True)
        return model
    model = model.to_empty(device=device)
    _load_served(model, reference, strict=True)
    return model


def _load_served(model, state, strict):
    """model.load_state_dict(state) from the served weights, the copies finished: on CUDA they run on the stream
    after load_state_dict returns, and the served weights' mapping goes as soon as the caller drops them; unmapped
    under a copy still reading it, the next kernel fails (an illegal address)."""
    model.load_state_dict(state, strict=strict)
    devices = {t.device for t in state.values() if t.is_cuda}
    for d in devices:
        torch.cuda.synchronize(d)


def _served_state(served):
    """The reference's state dict from the task server's weights (`served`: ({name: tensor}, the state dict's names),
    trial_channel.receive_weights): views, no copy; None without them (a task with no weights)."""
    if served is None:
        return None
    weights, names = served
    return {n: weights[n] for n in names}


def build_model_new(module, spec, device, served=None, init_on=None):
    """ModelNew for the trials, on `device`, with the reference's weights where it keeps the same (`served`: the
    task server's, see _served_state). Its __init__ runs where the reference's did (`init_on`: "cuda", "cpu"; None:
    on `device`, or on the CPU where it fails there). TaskError stage "missing" or "init" when it cannot be built."""
    if not hasattr(module, "ModelNew"):
        raise TaskError("missing", "the candidate does not define class ModelNew")
    init_inputs, seed = _init_inputs(spec), spec.get("init_seed", 42)
    reference = _served_state(served)
    if reference is not None:
        model = call_stage("init", lambda: _from_state(module.ModelNew, init_inputs, seed, device, reference))
        if model is not None:
            return model
    def construct(place):
        record = _InitRecorder()
        return _construct(module.ModelNew, init_inputs, seed, place, record), record

    ((model, created), record), _ = on_device_or_cpu(construct, torch.device(device).type, init_on)
    if not isinstance(model, torch.nn.Module):
        return call_stage("init", lambda: model.to(device)) if hasattr(model, "to") else model
    # Its __init__ computed on a parameter it made (read it with an op that is no initializer): its values are its
    # own. Otherwise the reference's weights go where it keeps tensors under the reference's names.
    own_values = bool(record.read & created)
    if reference is not None and not own_values:
        own = model.state_dict()
        shared = {k: v for k, v in reference.items() if k in own and own[k].shape == v.shape}
        if shared:
            _load_served(model, shared, strict=False)
    return call_stage("init", lambda: model.to(device))


def construct_for_extraction(module, spec, recorded):
    """Builds ModelNew once so that load_inline calls made in __init__ are recorded too: on the meta device first
    (parameters get no memory and no values, and nothing here needs them), on the CPU where its __init__ needs
    values. The model, or None when it cannot be built (its problems surface in the run gate)."""
    if not hasattr(module, "ModelNew"):
        return None
    before = len(recorded)
    for device in ("meta", "cpu"):
        del recorded[before:]  # What a failed attempt recorded is recorded again.
        try:
            return build_under_seed(module.ModelNew, _init_inputs(spec), spec.get("init_seed", 42), device)
        except TaskError:
            continue
    return None
