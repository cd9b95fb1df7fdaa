"""What the candidate worker does with a forward's outputs: checks they are plain tensors, copies them as they were
when the call returned, and says on anvil's report channel which ones it could not read (they go to the task
server's buffers: trial_channel.TrialData.done)."""

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


def unreadable_outputs(args, rel, names):
    """run.after_return for outputs `names` of `rel` whose memory the worker could not read when it handed them
    over: said on anvil's report channel, and the TaskError that ends the run."""
    message = (f"{rel}'s output {', '.join(names)} could not be read when the worker wrote it (its memory "
               "was unmapped or protected after the call returned): work left to a fault handler on its pages")
    if args.report is not None:
        args.report.send({"kind": "cheat", "rule": "run.after_return", "message": message})
    return TaskError("after_return", message)


def copied(result):
    """A copy of a call's result (a tensor, or a tuple/list of them): what it held when the call returned."""
    if type(result) in (torch.Tensor, torch.nn.Parameter):
        return result.detach().clone()
    if type(result) is list:
        return [copied(r) for r in result]
    if tensor_io.is_output_sequence(result):
        return tuple(copied(r) for r in result)
    return result
