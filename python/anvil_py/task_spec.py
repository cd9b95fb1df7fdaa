"""A task's spec without its tensors (docs/spec.md): the model is built, its inputs made and its forward traced on the
meta device, so shapes, dtypes, strides and the per-op shape trace cost nothing at KernelBench's real sizes (a prompt
needs them before any trial exists). Trusted side: runs only task code.

    python -m anvil_py.task_spec TASK.py...  ->  one JSON line per task on stdout: the spec, or {"error": "..."}

A reference that needs values to run (`.item()`, data-dependent shapes) cannot be traced this way: the answer is then
{"error": ...} naming the op, and nothing is materialised to get around it."""

import json
import os
import sys
import traceback

import torch

from anvil_py import tensor_io
from anvil_py.task_loader import TaskError, call_stage, load_task
from anvil_py.task_worker import _OpTrace, _spec, output_tensors

META = "meta"


class _Args:
    def __init__(self, task):
        self.task = task
        self.device = META


def derive(task_path):
    """The spec of `task_path`, derived on the meta device."""
    _, Model, get_inputs, get_init_inputs = load_task(task_path)
    torch.manual_seed(0)
    with torch.device(META):
        init_inputs = call_stage("get_init_inputs", get_init_inputs)
        if not isinstance(init_inputs, (list, tuple)):
            raise TaskError("get_init_inputs", "get_init_inputs() must return a list or tuple")
        model = call_stage("init", lambda: Model(*init_inputs))
        model = model.to(META)
        inputs = call_stage("get_inputs", get_inputs)
        if not isinstance(inputs, (list, tuple)):
            raise TaskError("get_inputs", "get_inputs() must return a list or tuple")
        inputs = [v.to(META) if isinstance(v, torch.Tensor) else v for v in inputs]
        trace = _OpTrace()
        with torch.no_grad(), trace:
            result = call_stage("forward", lambda: model(*inputs))
    outputs = output_tensors(result)
    spec = _spec(_Args(task_path), model, list(init_inputs), inputs, outputs, trace.ops)
    spec["without_tensors"] = True
    return spec


def _spec_or_error(task_path):
    try:
        return derive(task_path)
    except TaskError as e:
        return {"error": str(e)}
    except Exception as e:  # The reference needs values (or is broken): said, never worked around.
        last = traceback.extract_tb(e.__traceback__)[-1]
        return {"error": f"{type(e).__name__}: {e} (at {os.path.basename(last.filename)}:{last.lineno})"}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        print("usage: python -m anvil_py.task_spec TASK.py...", file=sys.stderr)
        return 2
    for task in argv:  # torch is imported once for them all.
        print(json.dumps(_spec_or_error(os.path.abspath(task)), default=str), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
