"""The aten and host traces a kernelbench candidate's forwards run under (docs/rules.md: run.aten_compute,
run.host_compute): every trial, every held-out set and the timed calls anvil chose to watch. What they see goes to
aten_ops.json (docs/protocol.md); anvil judges it.
"""

import contextlib
import ctypes
import json
import os

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from anvil_py.static_check.torch_names import aten_compute, observed_compute


class _AtenTrace(TorchDispatchMode):
    """The aten ops a forward dispatches, counted by name — also those an extension's C++ calls (`at::matmul`), as
    they pass the dispatcher too (catalog A1, A3, A4 at run time; the paper's profiler check)."""

    def __init__(self):
        super().__init__()
        self.ops = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = str(func)
        self.ops[name] = self.ops.get(name, 0) + 1
        return func(*args, **(kwargs or {}))


# Tensor methods that hand its data to Python or numpy (or run Python per element), and those that read one
# element as a Python number. Frozen: the tamper guard watches these names, and a frozenset cannot be emptied.
# (A tensor's storage is not among them: an aliasing check, `x.untyped_storage().data_ptr()`, is honest; what is
# read from a storage is the static rules' to judge, py.host_compute.)
_HOST_TRANSFERS = frozenset({torch.Tensor.numpy, torch.Tensor.tolist, torch.Tensor.__array__, torch.Tensor.__dlpack__,
                             torch.Tensor.apply_, torch.Tensor.map_, torch.Tensor.map2_, torch.Tensor.__repr__,
                             torch.Tensor.__format__})
_SCALAR_READS = frozenset({torch.Tensor.item, torch.Tensor.__float__, torch.Tensor.__int__, torch.Tensor.__index__,
                           torch.Tensor.__complex__})
# More element reads than this in one forward is elementwise work done in Python. Honest forwards read a few
# (a scalar parameter, a flag).
_SCALAR_READ_LIMIT = 64
_SCALAR_READ_OP = "aten._local_scalar_dense.default"


class _HostTrace(TorchFunctionMode):
    """Tensor data a forward hands to Python or numpy (catalog A1/A3: the work done on the host, with a decoy
    kernel beside it) — what no aten op shows, as numpy and Python loops compute outside the dispatcher."""

    def __init__(self):
        super().__init__()
        self.host = {}
        self.reads = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func in _HOST_TRANSFERS:
            name = "Tensor." + getattr(func, "__name__", str(func))
            self.host[name] = self.host.get(name, 0) + 1
        elif func in _SCALAR_READS:
            self.reads += 1
        return func(*args, **(kwargs or {}))


class OpObserver:
    """libanvil_ops.so (src/integrity/op_observer.cc): every op dispatched in this process, counted in C++ — nested
    ones (a custom op's body), those of every namespace, in every call, timed ones included. Started before the
    candidate's code loads, so that the op names its code registers are known as its own; judged from the first
    trial on (what ModelNew's __init__ computes, its weights, is its business). None where the library is missing."""

    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        self.lib.anvil_ops_read.restype = ctypes.c_longlong
        self.lib.anvil_ops_read.argtypes = [ctypes.c_char_p, ctypes.c_longlong]
        if self.lib.anvil_ops_start() != 0:
            raise RuntimeError("the op observer could not register with torch")
        self.registered = frozenset(torch._C._dispatch_get_all_op_names())
        self.own = frozenset()
        self.base = {}
        # RecordFunction's switch is the worker's alone (its own look at outputs is not the candidate's compute);
        # the candidate's code finds a refusal in its place, and its attempt is named.
        self._switch = torch._C._autograd._enable_record_function
        self.refused = []

        def refuse(enable):
            if not enable:
                self.refused.append("torch._C._autograd._enable_record_function(False)")
                raise RuntimeError("anvil: RecordFunction stays on in a candidate's process")
        torch._C._autograd._enable_record_function = refuse
        torch.autograd._enable_record_function = refuse

    @staticmethod
    def start():
        path = os.environ.get("ANVIL_OPS_LIB")
        return OpObserver(path) if path else None

    def counts(self):
        n = self.lib.anvil_ops_read(None, 0)
        while True:
            buf = ctypes.create_string_buffer(n + 1)
            need = self.lib.anvil_ops_read(buf, n + 1)
            if need <= n + 1:
                break
            n = need
        out = {}
        for line in buf.value.decode(errors="replace").splitlines():
            name, _, count = line.rpartition("\t")
            out[name] = int(count)
        return out

    def begin(self):
        """After the candidate's code is loaded and ModelNew built: its ops are those it registered; counting starts."""
        self.own = frozenset(torch._C._dispatch_get_all_op_names()) - self.registered
        self.base = self.counts()

    def since(self):
        """The ops counted since the last begin() or since(), and a new start from here."""
        now = self.counts()
        delta = {k: v - self.base.get(k, 0) for k, v in now.items() if v != self.base.get(k, 0)}
        self.base = now
        return delta

    def switched_off(self):
        """Whether this thread's ops no longer reach the observer (torch lets a thread turn RecordFunction off), or
        the candidate tried to turn it off."""
        return self.lib.anvil_ops_enabled() == 0 or bool(self.refused)

    @contextlib.contextmanager
    def paused(self):
        """The worker's own ops (a look at an output) on this thread, not counted."""
        self._switch(False)
        try:
            yield
        finally:
            self._switch(True)


class ForwardTrace:
    """Every trial's forward (kernelbench format) runs under both traces, and so do the watched timed calls; what
    they saw accumulates, so a candidate that computes with torch only from its second call on, or only once
    timed, is seen too (catalog C4). `first` names the forward where something was seen first. With the op
    observer, what it counted between checkpoints (each trial, the held-out sets, the timed calls, all of them) is
    judged too: ops nested in others, in calls the Python traces did not watch, or run between calls."""

    def __init__(self, observer=None):
        self.aten = _AtenTrace()
        self.ops = self.aten.ops
        self.host = {}
        self.first = None
        self.observer = observer
        self.observed = {}
        if observer is not None:
            observer.begin()

    @contextlib.contextmanager
    def forward(self, label):
        host = _HostTrace()
        scalar_reads = self.ops.get(_SCALAR_READ_OP, 0)
        try:
            with self.aten, host:
                yield
        finally:
            for name, n in host.host.items():
                self.host[name] = self.host.get(name, 0) + n
            # Elements read one by one, whether through Tensor.item or the op it dispatches.
            reads = max(host.reads, self.ops.get(_SCALAR_READ_OP, 0) - scalar_reads)
            if reads > _SCALAR_READ_LIMIT:
                key = f"{reads} element reads (Tensor.item/__float__) in one forward"
                self.host[key] = self.host.get(key, 0) + 1
            if self.first is None and (self.host or any(aten_compute(op) for op in self.ops)):
                self.first = label

    def checkpoint(self, label):
        """The observer's ops since the last checkpoint, judged: compute found here is `first` seen in `label`."""
        if self.observer is None:
            return
        for name, n in self.observer.since().items():
            if observed_compute(name, self.observer.own):
                self.observed[name] = self.observed.get(name, 0) + n
        if self.observer.switched_off():
            self.observed["RecordFunction switched off (torch._C._autograd._enable_record_function)"] = 1
        if self.first is None and self.observed:
            self.first = label

    def skip(self):
        """What the observer counted since the last checkpoint is the worker's own (a recheck's gather): dropped."""
        if self.observer is not None:
            self.observer.since()

    def own_ops(self):
        """A context for the worker's own ops, which the observer does not count."""
        return self.observer.paused() if self.observer is not None else contextlib.nullcontext()

    def write(self, out, report=None):
        """To aten_ops.json, and to anvil's report channel (`report`), where it cannot be rewritten."""
        compute = sorted(op for op in self.ops if aten_compute(op))
        listed = [f"{op} x{self.ops[op]}" for op in compute]
        listed += [f"{op} x{n} (op observer)" for op, n in sorted(self.observed.items())]
        host = [f"{name} x{n}" for name, n in sorted(self.host.items())]
        if report is not None:
            report.send({"kind": "ops", "compute": listed, "host": host, "first": self.first})
        with open(os.path.join(out, "aten_ops.json"), "w") as f:
            json.dump({"ops": self.ops, "compute": listed, "observer": self.observer is not None, "host": host,
                       "first": self.first}, f)
