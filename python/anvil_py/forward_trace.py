"""The aten and host traces a kernelbench candidate's forwards run under (docs/rules.md: run.aten_compute,
run.host_compute): every trial, every held-out set and the timed calls anvil chose to watch. What they see goes to
aten_ops.json (docs/protocol.md); anvil judges it.
"""

import contextlib
import json
import os

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from anvil_py.static_check.torch_names import aten_compute


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
_HOST_TRANSFERS = frozenset({torch.Tensor.numpy, torch.Tensor.tolist, torch.Tensor.__array__, torch.Tensor.__dlpack__,
                             torch.Tensor.untyped_storage, torch.Tensor.storage, torch.Tensor._typed_storage,
                             torch.Tensor.apply_, torch.Tensor.map_, torch.Tensor.map2_, torch.Tensor.__repr__,
                             torch.Tensor.__format__})
_SCALAR_READS = frozenset({torch.Tensor.item, torch.Tensor.__float__, torch.Tensor.__int__, torch.Tensor.__index__,
                           torch.Tensor.__complex__})
# More element reads than this in one forward is elementwise work done in Python. Honest forwards read a few
# (a scalar parameter, a flag).
_SCALAR_READ_LIMIT = 64


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


class ForwardTrace:
    """Every trial's forward (kernelbench format) runs under both traces, and so do the watched timed calls; what
    they saw accumulates, so a candidate that computes with torch only from its second call on, or only once
    timed, is seen too (catalog C4). `first` names the forward where something was seen first."""

    def __init__(self):
        self.aten = _AtenTrace()
        self.ops = self.aten.ops
        self.host = {}
        self.first = None

    @contextlib.contextmanager
    def forward(self, label):
        host = _HostTrace()
        try:
            with self.aten, host:
                yield
        finally:
            for name, n in host.host.items():
                self.host[name] = self.host.get(name, 0) + n
            if host.reads > _SCALAR_READ_LIMIT:
                key = f"{host.reads} element reads (Tensor.item/__float__) in one forward"
                self.host[key] = self.host.get(key, 0) + 1
            if self.first is None and (self.host or any(aten_compute(op) for op in self.ops)):
                self.first = label

    def write(self, out):
        compute = sorted(op for op in self.ops if aten_compute(op))
        with open(os.path.join(out, "aten_ops.json"), "w") as f:
            json.dump({"ops": self.ops, "compute": [f"{op} x{self.ops[op]}" for op in compute],
                       "host": [f"{name} x{n}" for name, n in sorted(self.host.items())], "first": self.first}, f)
