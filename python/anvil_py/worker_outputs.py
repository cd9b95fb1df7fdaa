"""What the candidate worker does with a forward's outputs: checks they are plain tensors, copies them as they were
when the call returned, and writes them to a tensor folder it seals on anvil's report channel (docs/protocol.md)."""

import os

import torch

from anvil_py import tensor_io
from anvil_py.task_loader import TaskError


def check_outputs(result, k):
    """The output tensors of trial `k`'s (or a timing set's) result: plain tensors, or a TaskError."""
    outputs = tensor_io.flatten_outputs(result)
    for i, o in enumerate(outputs):
        if not isinstance(o, torch.Tensor):
            raise TaskError("output", f"trial {k}: output {i} is a {type(o).__name__}, not a tensor")
        if type(o) not in (torch.Tensor, torch.nn.Parameter):
            raise TaskError("output", f"trial {k}: output {i} is a {type(o).__name__}, a tensor subclass; "
                            "return a plain torch.Tensor")
    return outputs


def write_outputs(args, rel, named):
    """A tensor folder of outputs, written and sealed on anvil's report channel (anvil compares only what matches)."""
    written = tensor_io.write_dir(os.path.join(args.out, rel), named)
    if args.report is not None:
        args.report.seal(rel, written)


def copied(result):
    """A copy of a call's result (a tensor, or a tuple/list of them): what it held when the call returned."""
    if type(result) in (torch.Tensor, torch.nn.Parameter):
        return result.detach().clone()
    if type(result) is list:
        return [copied(r) for r in result]
    if tensor_io.is_output_sequence(result):
        return tuple(copied(r) for r in result)
    return result
