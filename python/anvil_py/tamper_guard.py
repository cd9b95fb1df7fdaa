"""Catalog D3 and D6 at run time: what the candidate's process must not change, fingerprinted before the
candidate's code loads and checked again after each phase and between timed calls.

The static checker reads the candidate's source; this sees what its code did — a patch made through an alias, a
computed name, `type.__setattr__`, `vars()`, a loop over a module, whatever the spelling. Watched: anvil's own
worker modules (every function, class and global, and every class's attributes; their tables are frozen, so they
cannot be emptied in place), the torch, time, os, json, struct and ctypes functions the worker times, copies, writes
and talks to anvil with, torch's mode stacks that its aten and host traces run on, and a few builtins. A change ends the
run: the worker writes `tamper.json` (what changed, and when it was found) and anvil judges it (`run.tamper`).
The timed calls themselves run in compiled code (timing.CompiledTimer), so a patch that undoes itself before a
check cannot change a time either.
"""

import builtins
import ctypes
import json
import os
import struct
import sys
import time

import numpy
import torch
import torch.overrides
import torch.utils._python_dispatch

from anvil_py.task_loader import TaskError

_OUR_MODULES = ("anvil_py.candidate_worker", "anvil_py.timing", "anvil_py.tensor_io", "anvil_py.kernel_trace",
                "anvil_py.task_loader", "anvil_py.tamper_guard", "anvil_py.native_model", "anvil_py.forward_trace",
                "anvil_py.report_channel", "anvil_py.timed_calls", "anvil_py.worker_outputs", "anvil_py.model_init",
                "anvil_py.static_check.torch_names", "__main__")
# The mode machinery the worker's aten and host traces run on (forward_trace.ForwardTrace).
_MODE_STACK = ("_len_torch_dispatch_stack", "_len_torch_function_stack", "_push_on_torch_dispatch_stack",
               "_pop_torch_dispatch_stack", "_push_on_torch_function_stack", "_pop_torch_function_stack",
               "_get_dispatch_stack_at", "_get_function_stack_at")
_NAMED = [
    ("torch", torch, ("empty", "zeros", "from_numpy", "is_tensor", "no_grad", "device")),
    ("torch.Tensor", torch.Tensor, ("copy_", "clone", "detach", "contiguous", "cpu", "to", "numpy", "data_ptr",
                                    "element_size", "numel", "reshape", "view", "zero_", "__class__")),
    ("torch.cuda", torch.cuda, ("Event", "Stream", "synchronize", "current_stream", "set_stream",
                                "get_device_properties")),
    ("torch.cuda.Event", torch.cuda.Event, None),
    ("time", time, ("perf_counter", "perf_counter_ns", "time", "time_ns", "monotonic", "monotonic_ns")),
    ("os", os, ("read", "write", "replace", "makedirs", "_exit", "open", "close", "fsync", "fstat", "urandom")),
    ("json", json, ("dump", "dumps", "load", "loads")),
    ("struct", struct, ("Struct", "pack", "unpack")),
    ("ctypes", ctypes, ("CDLL", "CFUNCTYPE", "memmove")),
    ("numpy", numpy, ("memmap",)),
    ("builtins", builtins, ("open", "isinstance", "len", "range", "getattr", "type", "print")),
    ("torch._C", torch._C, _MODE_STACK),
    ("torch._C._autograd", torch._C._autograd, ("_enable_record_function",)),
    ("torch.autograd", torch.autograd, ("_enable_record_function",)),
    ("torch.utils._python_dispatch", torch.utils._python_dispatch, ("_push_mode", "_pop_mode",
                                                                    "_get_current_dispatch_mode", "TorchDispatchMode")),
    ("torch.utils._python_dispatch.TorchDispatchMode", torch.utils._python_dispatch.TorchDispatchMode, None),
    ("torch.overrides", torch.overrides, ("_push_mode", "_pop_mode", "TorchFunctionMode", "handle_torch_function",
                                          "has_torch_function")),
    ("torch.overrides.TorchFunctionMode", torch.overrides.TorchFunctionMode, None),
]


def _entries():
    """(label, owner, names or None for all of its own attributes)."""
    out = list(_NAMED)
    for name in _OUR_MODULES:
        module = sys.modules.get(name)
        if module is None or (name == "__main__" and getattr(module, "__package__", None) != "anvil_py"):
            continue  # __main__ is watched when it is the worker itself (python -m anvil_py.candidate_worker).
        out.append((name, module, None))
        for value in list(vars(module).values()):
            if isinstance(value, type) and getattr(value, "__module__", None) == name:
                out.append((f"{name}.{value.__qualname__}", value, None))
    return out


def fingerprint():
    """{qualified name: (id(value), id(its code))} over everything watched."""
    fp = {}
    for label, owner, names in _entries():
        try:
            attrs = vars(owner)
        except TypeError:
            attrs = {}
        for name in (names if names is not None else list(attrs)):
            value = attrs[name] if name in attrs else getattr(owner, name, None)
            if names is None and name.startswith("__") and not callable(value):
                continue  # __doc__, __dict__ and the like.
            # A function's code can be swapped under the same object (`f.__code__ = ...`, or through ctypes).
            fp[f"{label}.{name}"] = (id(value), id(getattr(value, "__code__", None)))
        if names is not None:
            fp[f"{label}.__class__"] = id(type(owner))
    return fp


class TamperGuard:
    """Take it before the candidate's code loads; `check(when)` after each phase."""

    def __init__(self, out_dir, report=None):
        self.out_dir = out_dir
        self.report = report  # report_channel.ReportChannel: what is found goes to anvil at once.
        self.before = fingerprint()

    def changes(self):
        """The watched names whose values are not the ones the guard started with."""
        now = fingerprint()
        return sorted(k for k, v in self.before.items() if now.get(k) != v)

    def check(self, when):
        changed = self.changes()
        if not changed:
            return
        if self.report is not None:
            self.report.send({"kind": "tamper", "changed": changed, "when": when})
        with open(os.path.join(self.out_dir, "tamper.json"), "w") as f:
            json.dump({"changed": changed, "when": when}, f)
        shown = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
        raise TaskError("tamper", f"the candidate's code replaced what anvil's worker relies on ({when}): {shown}")
