"""The timed calls of a candidate (docs/protocol.md, timed calls): warmup and timed calls through the compiled timer,
under anvil's call clock, each set's inputs copied into the same buffers, the last output of each set kept for
anvil's recheck, and every call's outputs looked at right after it returned and again before the next one
(run.after_return)."""

import contextlib
import ctypes
import os

import numpy
import torch

from anvil_py import tensor_io
from anvil_py.native_model import NativeModel
from anvil_py.task_loader import TaskError
from anvil_py.timing import recheck_points, recheck_sample
from anvil_py.worker_outputs import check_outputs, copied

# Elements of each output a timed call returned that are looked at then and again before the next call.
LOOK_POINTS = 256


def timed_calls(model, warm, sets, timer, args, clock, trace, traced, timeline, guard, ops, call_inputs=None,
                recheck_to=None):
    """Warmup on trial 0's inputs, then the timed calls rotating through the first --recheck-sets timing sets (input
    sets no trial had: a cache keyed on input values replays nothing) — or, for a task without them, through the
    trial sets. Each set is copied into the same buffers before its call (so neither a call count nor a pointer
    tells a replay when it is safe). The output of the last call made with each set is kept (a copy taken after
    the call, outside its timing: an output buffer the candidate reuses stays right); after the last call anvil
    names the sets it looks at again (a seed, timing.recheck_sample) and only theirs go to `recheck_to`.

    The timed calls of the `traced` mask (anvil's random half, told only now; their times do not count) also run
    under the forward's aten and host traces (`ops`, kernelbench format): a candidate honest in its trials and
    computing with torch once timed (catalog C4) is seen there.

    `call_inputs` (the task server's sets; `sets` only counts them): timed call k's own buffers, which the server
    fills with the call's set after the worker's `ready`, while the compiled timer waits for anvil's `go` with the
    thread's signals held. Nothing of a set is in the process before its call, and no buffer or address is a set's.
    `recheck_to(k, outputs)` (the task server's TrialData.recheck): the rechecked outputs go there; without it (a
    task with no timing sets, whose calls rotate through the trials' sets) nothing is rechecked."""
    live = [v.clone() if isinstance(v, torch.Tensor) else v for v in (warm if warm is not None else sets[0])]
    timer.sync()
    state = {"call": -1, "set": None, "out": None, "look": None, "args": live}
    last = {}
    own_ops = ops.own_ops if ops is not None else contextlib.nullcontext

    def look():
        """Right after a timed call returned (its thread's signals still held): some of its outputs' elements,
        drawn at random now. keep() finds them unchanged, or the candidate finished its work after the call."""
        rng = numpy.random.default_rng(int.from_bytes(os.urandom(8), "little"))
        seen = []
        if args.report is not None:  # A process that dies in the look: its outputs were not readable at the return.
            args.report.send({"kind": "look", "call": state["call"] - args.warmup})
        with own_ops():
            for o in tensor_io.flatten_outputs(state["out"]):
                if isinstance(o, torch.Tensor) and o.numel():
                    picked = torch.from_numpy(rng.choice(o.numel(), min(o.numel(), LOOK_POINTS), replace=False))
                    seen.append((o, picked, o.detach().reshape(-1)[picked.to(o.device)].cpu()))
        state["look"] = seen
        if args.report is not None:
            args.report.send({"kind": "looked"})

    def keep():
        """The previous call's output, copied for its set (between calls, outside the timed window) when no later
        call uses that set: call c is the last of its set when c + len(sets) > warmup + iters - 1. First, its
        elements look() drew must be as they were when the call returned."""
        k = state["call"] - args.warmup
        with own_ops():
            for o, picked, then in state["look"] or ():
                now = o.detach().reshape(-1)[picked.to(o.device)].cpu()
                if not torch.equal(now, then):
                    changed = int((now != then).sum()) if now.shape == then.shape else len(then)
                    what = "a warmup call" if k < 0 else f"timed call {k}"
                    message = (f"the output of {what} changed after the call returned ({changed} of {len(then)} "
                               "elements drawn then): work done outside the call (a signal handler, a thread, a "
                               "fault handler on the output's pages)")
                    if args.report is not None:
                        args.report.send({"kind": "cheat", "rule": "run.after_return", "message": message})
                    raise TaskError("after_return", message)
        state["look"] = None
        if (state["set"] is not None and state["out"] is not None
                and state["call"] + len(sets) > args.warmup + args.iters - 1):
            last[state["set"]] = copied(state["out"])
        state["out"] = None

    def before_each():
        if state["call"] >= 0:
            guard.check(f"after call {state['call']} of the warmup and timed calls")
        keep()
        state["call"] += 1
        call = state["call"]
        if warm is not None:
            state["set"] = None if call < args.warmup else (call - args.warmup) % len(sets)
            src = warm if state["set"] is None else sets[state["set"]]
        else:
            state["set"] = call % len(sets)
            src = sets[state["set"]]
        state["args"] = live
        if call_inputs is not None and state["set"] is not None:
            state["args"] = None  # The last call's buffers go first.
            state["args"] = call_inputs(call - args.warmup)  # Written by the server after `ready`.
            src = ()
        for dst, value in zip(live, src):
            if isinstance(dst, torch.Tensor):
                if dst.device.type == "cpu":
                    # A plain memcpy: torch's own thread pool would still be spinning when the timed call starts.
                    ctypes.memmove(dst.data_ptr(), value.data_ptr(), value.numel() * value.element_size())
                else:
                    dst.copy_(value)
        if type(model) is NativeModel:
            model.prepare(state["args"])

    def call():
        k = state["call"] - args.warmup
        if ops is not None and 0 <= k < 64 and traced >> k & 1:
            with ops.forward(f"timed call {k}"):
                out = model(*state["args"])
        else:
            out = model(*state["args"])
        state["out"] = out
        return out

    times = timer.time(call, args.warmup, args.iters, before_each, clock, trace, traced, after_each=look)
    timer.sync()
    if ops is not None:
        ops.checkpoint("the warmup and timed calls")
        ops.write(args.out, args.report)
    guard.check("after the timed calls")
    keep()
    timeline.lap("perf_calls")
    if type(model) is NativeModel:
        model.check_guards("the last timed call")
    if args.recheck_sets > 0:
        picked = clock.recheck() if clock is not None else None
        chosen = range(len(sets)) if picked is None else recheck_sample(len(sets), picked[1], picked[0])
        for k in chosen if recheck_to is not None else ():
            if k not in last:
                continue  # Fewer calls than sets: anvil finds no output and says so.
            outputs = check_outputs(last[k], k)
            written = []
            for i, o in enumerate(outputs):
                # Of a large output, only the elements the seed draws (recheck_points): anvil compares those.
                points = recheck_points(o.numel(), picked[0], k, i) if picked is not None else None
                if points is not None:
                    o = o.reshape(-1)[torch.from_numpy(points).to(o.device)]
                written.append((f"out{i}", o))
            if ops is not None:
                ops.skip()  # The gather is the worker's own.
            recheck_to(k, [o for _, o in written])
    timeline.lap("perf_recheck")
    return times
