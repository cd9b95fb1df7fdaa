"""What the candidate worker does with a forward's outputs: checks they are plain tensors, copies them as they were
when the call returned, and writes them to a tensor folder it seals on anvil's report channel (docs/protocol.md)."""

import ctypes
import errno
import itertools
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
    """A tensor folder of outputs, written and sealed on anvil's report channel (anvil compares only what matches).
    An output whose memory the write could not read (pages the candidate unmapped or protected after its call, to
    finish the work in a fault handler at their first touch) is run.after_return."""
    try:
        written = tensor_io.write_dir(os.path.join(args.out, rel), named)
    except OSError as err:
        unreadable = [name for name, t in named if isinstance(t, torch.Tensor) and not _readable(t)]
        if not unreadable:
            raise
        raise unreadable_outputs(args, rel, unreadable) from err
    if args.report is not None:
        args.report.seal(rel, written)


def unreadable_outputs(args, rel, names):
    """run.after_return for outputs `names` of `rel` whose memory the worker could not read when it wrote or handed
    them over: said on anvil's report channel, and the TaskError that ends the run."""
    message = (f"{rel}'s output {', '.join(names)} could not be read when the worker wrote it (its memory "
               "was unmapped or protected after the call returned): work left to a fault handler on its pages")
    if args.report is not None:
        args.report.send({"kind": "cheat", "rule": "run.after_return", "message": message})
    return TaskError("after_return", message)


def _readable(t):
    """Whether every page of a host tensor's memory can be read by a system call, without touching it from here (a
    read from Python would run the candidate's fault handler): one byte of each page through a pipe, EFAULT if not."""
    if t.device.type != "cpu" or not t.numel():
        return True
    start = t.data_ptr()
    end = start + t.numel() * t.element_size()
    page = os.sysconf("SC_PAGE_SIZE")
    r, w = os.pipe()
    try:
        for addr in itertools.chain(range(start, end, page), (end - 1,)):
            try:
                os.write(w, (ctypes.c_char * 1).from_address(addr))
            except OSError as err:
                if err.errno == errno.EFAULT:
                    return False
                raise
            os.read(r, 1)
        return True
    finally:
        os.close(r)
        os.close(w)


def copied(result):
    """A copy of a call's result (a tensor, or a tuple/list of them): what it held when the call returned."""
    if type(result) in (torch.Tensor, torch.nn.Parameter):
        return result.detach().clone()
    if type(result) is list:
        return [copied(r) for r in result]
    if tensor_io.is_output_sequence(result):
        return tuple(copied(r) for r in result)
    return result
