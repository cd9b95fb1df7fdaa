"""Tensor directories (docs/protocol.md): tensors.json plus raw little-endian files."""

import json
import os

import numpy
import torch

_DTYPES = {
    "float32": torch.float32, "float64": torch.float64, "float16": torch.float16,
    "bfloat16": torch.bfloat16, "int64": torch.int64, "int32": torch.int32,
    "int16": torch.int16, "int8": torch.int8, "uint8": torch.uint8, "bool": torch.bool,
}
_NAMES = {v: k for k, v in _DTYPES.items()}


def dtype_name(dtype):
    if dtype not in _NAMES:
        raise TypeError(f"dtype {dtype} is not supported by anvil (supported: {', '.join(_DTYPES)})")
    return _NAMES[dtype]


def dtype_from_name(name):
    return _DTYPES[name]


def describe(value, name):
    """A spec entry for one value: tensor metadata or a JSON scalar."""
    if isinstance(value, torch.Tensor):
        return {"name": name, "dtype": dtype_name(value.dtype), "shape": list(value.shape),
                "strides": list(value.stride())}
    return {"name": name, "scalar": to_json_value(value)}


def to_json_value(value):
    """A value of get_init_inputs() or a scalar output as JSON: a tuple stays one ({"tuple": [...]}, so that
    `kernel_size=(5, 7)` reaches ModelNew as the tuple it was), other values as they read."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, tuple):
        return {"tuple": [to_json_value(v) for v in value]}
    if isinstance(value, list):
        return [to_json_value(v) for v in value]
    if isinstance(value, torch.dtype):
        return str(value)
    return repr(value)


def from_json_value(value):
    """to_json_value's inverse: the tuples come back as tuples."""
    if isinstance(value, dict) and set(value) == {"tuple"} and isinstance(value["tuple"], list):
        return tuple(from_json_value(v) for v in value["tuple"])
    if isinstance(value, list):
        return [from_json_value(v) for v in value]
    return value


def write_dir(path, named_values):
    """Writes [(name, value)] where value is a tensor or a plain scalar. Returns [(name, tensor)]: each tensor as it
    was written (contiguous, on the CPU)."""
    os.makedirs(path, exist_ok=True)
    entries = []
    written = []
    for name, value in named_values:
        if isinstance(value, torch.Tensor):
            t = value.detach().contiguous().cpu()
            written.append((name, t))
            fname = f"{name}.bin"
            raw = t.reshape(-1).view(torch.uint8) if t.numel() else torch.empty(0, dtype=torch.uint8)
            # A plain write, not numpy's tofile: a full disk is then an OSError carrying its errno.
            with open(os.path.join(path, fname), "wb") as f:
                f.write(raw.numpy().data)
            entries.append({"name": name, "dtype": dtype_name(t.dtype), "shape": list(t.shape),
                            "file": fname})
        else:
            entries.append({"name": name, "scalar": to_json_value(value)})
    tmp = os.path.join(path, "tensors.json.tmp")
    with open(tmp, "w") as f:
        json.dump({"version": 1, "tensors": entries}, f)
    os.replace(tmp, os.path.join(path, "tensors.json"))
    return written


def _mapped(fname):
    """The file's bytes as a uint8 tensor, mapped copy-on-write rather than read: pages come from the page cache
    as they are used (to a GPU: copied once, straight from it), and a write stays in this process."""
    return torch.from_numpy(numpy.memmap(fname, dtype=numpy.uint8, mode="c"))


def read_dir(path, device="cpu"):
    """Returns [(name, value)] in manifest order; tensors land on `device`."""
    with open(os.path.join(path, "tensors.json")) as f:
        manifest = json.load(f)
    values = []
    for entry in manifest["tensors"]:
        if "file" not in entry:
            values.append((entry["name"], from_json_value(entry.get("scalar"))))
            continue
        dtype = _DTYPES[entry["dtype"]]
        fname = os.path.join(path, entry["file"])
        size = os.path.getsize(fname)
        if size == 0:
            t = torch.empty(entry["shape"], dtype=dtype)
        else:
            t = _mapped(fname).view(dtype).reshape(entry["shape"])
        values.append((entry["name"], t.to(device)))
    return values


def is_output_sequence(result):
    """A tuple or list of anvil's reading: exactly those, or torch's named tuples (torch.return_types). A subclass of
    the candidate's could run its code when iterated — after the call, outside every trace and timing."""
    kind = type(result)
    return kind in (tuple, list) or (issubclass(kind, tuple) and kind.__module__ == "torch.return_types")


def flatten_outputs(result):
    """A forward result as a flat list: a tensor, or a tuple/list of tensors (nested allowed). Anything else is one
    output, which the caller judges."""
    if is_output_sequence(result):
        out = []
        for item in result:
            out.extend(flatten_outputs(item))
        return out
    return [result]
