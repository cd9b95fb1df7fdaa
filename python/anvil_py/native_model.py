"""The native format's call (docs/native-abi.md): anvil_forward from the candidate's shared object, with inputs and
parameters as the harness holds them and outputs the harness allocates, poisons and guards."""

import ctypes
import math

import torch

from anvil_py import tensor_io
from anvil_py.task_loader import TaskError

NATIVE_DTYPES = {"float32": 0, "float64": 1, "float16": 2, "bfloat16": 3, "int64": 4, "int32": 5,
                 "int16": 6, "int8": 7, "uint8": 8, "bool": 9}
MAX_DIMS = 8


class AnvilTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int32), ("ndim", ctypes.c_int32),
                ("shape", ctypes.c_int64 * MAX_DIMS), ("stride", ctypes.c_int64 * MAX_DIMS)]


def _native_tensor(t):
    if t.dim() > MAX_DIMS:
        raise TaskError("native", f"tensor with {t.dim()} dims exceeds the native ABI's {MAX_DIMS}")
    at = AnvilTensor()
    at.data = t.data_ptr()
    at.dtype = NATIVE_DTYPES[tensor_io.dtype_name(t.dtype)]
    at.ndim = t.dim()
    for i in range(t.dim()):
        at.shape[i] = t.shape[i]
        at.stride[i] = t.stride(i)
    return at


# Random bytes on both sides of every native output (catalog B7): a kernel that writes past either end changes
# them. 4096 keeps the output as aligned as the allocation itself.
GUARD_BYTES = 4096


def _guarded_poisoned(entry, device, pattern):
    """An output poisoned with NaN (or the integer minimum, or True) inside one allocation with guard bands;
    returns (output, whole allocation)."""
    dtype = tensor_io.dtype_from_name(entry["dtype"])
    numel = math.prod(entry["shape"])
    nbytes = numel * torch.empty(0, dtype=dtype).element_size()
    raw = torch.empty(nbytes + 2 * GUARD_BYTES, dtype=torch.uint8, device=device)
    raw[:GUARD_BYTES].copy_(pattern)
    raw[GUARD_BYTES + nbytes:].copy_(pattern)
    out = raw[GUARD_BYTES:GUARD_BYTES + nbytes].view(dtype).view(entry["shape"])
    if dtype.is_floating_point:
        out.fill_(math.nan)
    elif dtype == torch.bool:
        out.fill_(True)
    else:
        out.fill_(torch.iinfo(dtype).min)
    return out, raw


class NativeModel:
    """Calls anvil_forward from a shared object with harness-allocated outputs."""

    def __init__(self, so_path, spec, params, device):
        self.lib = ctypes.CDLL(so_path)
        if not hasattr(self.lib, "anvil_forward"):
            raise TaskError("missing", "the shared object does not export anvil_forward")
        self.fn = self.lib.anvil_forward
        self.fn.restype = ctypes.c_int
        self.fn.argtypes = [ctypes.POINTER(AnvilTensor), ctypes.c_int, ctypes.POINTER(AnvilTensor),
                            ctypes.c_int, ctypes.c_void_p]
        self.spec = spec
        self.params = [p.contiguous() for p in params]
        self.device = torch.device(device)
        self.pattern = torch.randint(0, 256, (GUARD_BYTES,), dtype=torch.uint8).to(self.device)
        self.guarded = []  # The last call's output allocations.
        self.prepared = None  # prepare()'s arguments for the next call.

    def prepare(self, inputs):
        """Everything but the call itself for the next call, on `inputs`. The timed calls prepare outside their
        timing (a timed call is the candidate's anvil_forward only; the harness's allocations and fills took 0.4 ms
        a call on the H200)."""
        self.prepared = self._arguments(inputs)

    def _arguments(self, inputs):
        """Poisoned, guarded outputs and the ABI's arrays for a call on `inputs`."""
        tensors = [t.contiguous() for t in inputs if isinstance(t, torch.Tensor)] + self.params
        guarded = [_guarded_poisoned(o, self.device, self.pattern) for o in self.spec["outputs"]]
        outs = [out for out, _ in guarded]
        in_arr = (AnvilTensor * max(len(tensors), 1))(*[_native_tensor(t) for t in tensors])
        out_arr = (AnvilTensor * max(len(outs), 1))(*[_native_tensor(t) for t in outs])
        stream = torch.cuda.current_stream(self.device).cuda_stream if self.device.type == "cuda" else None
        # The inputs (kept alive) and every argument of the call.
        return list(inputs), tensors, outs, [raw for _, raw in guarded], in_arr, out_arr, stream

    def __call__(self, *inputs):
        prepared, self.prepared = self.prepared, None
        if prepared is None or len(prepared[0]) != len(inputs) or any(a is not b for a, b in zip(prepared[0], inputs)):
            prepared = self._arguments(inputs)
        _, tensors, outs, self.guarded, in_arr, out_arr, stream = prepared
        rc = self.fn(in_arr, len(tensors), out_arr, len(outs), stream)
        if rc != 0:
            message = ""
            if hasattr(self.lib, "anvil_last_error"):
                self.lib.anvil_last_error.restype = ctypes.c_char_p
                raw = self.lib.anvil_last_error()
                message = raw.decode(errors="replace") if raw else ""
            raise TaskError("native", f"anvil_forward returned {rc}" + (f": {message}" if message else ""))
        return outs[0] if len(outs) == 1 else tuple(outs)

    def check_guards(self, when):
        """After a sync: the last call's outputs' guard bands must be as the harness left them."""
        for i, raw in enumerate(self.guarded):
            for side, band in (("before the start", raw[:GUARD_BYTES]), ("past the end", raw[-GUARD_BYTES:])):
                if not torch.equal(band, self.pattern):
                    changed = int((band != self.pattern).sum())
                    raise TaskError("guard", f"{when}: anvil_forward wrote {side} of output {i} "
                                    f"({changed} of the {GUARD_BYTES} bytes there changed): an out-of-bounds write")
