"""Loading a KernelBench task file and turning its failures into clear messages."""

import importlib.util
import os
import sys
import traceback


class TaskError(Exception):
    """A problem with the task itself; `stage` says which step failed."""

    def __init__(self, stage, message, tb=""):
        super().__init__(message)
        self.stage = stage
        self.message = message
        self.traceback = tb


def load_module(path, module_name):
    """Imports a Python file as a fresh module; raises TaskError(stage='import')."""
    path = os.path.abspath(path)
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise TaskError("import", f"cannot load {path} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as e:
        raise TaskError("import", f"syntax error in {os.path.basename(path)} line {e.lineno}: {e.msg}",
                        traceback.format_exc()) from None
    except BaseException as e:  # noqa: BLE001 - any failure of user code is reported
        raise TaskError("import", f"importing {os.path.basename(path)} failed: {type(e).__name__}: {e}",
                        traceback.format_exc()) from None
    return module


def load_task(path):
    """Returns (module, Model, get_inputs, get_init_inputs)."""
    module = load_module(path, "anvil_task")
    missing = [n for n in ("Model", "get_inputs", "get_init_inputs") if not hasattr(module, n)]
    if missing:
        raise TaskError("missing", f"{os.path.basename(path)} does not define {', '.join(missing)}; a "
                        "KernelBench task needs class Model(nn.Module), get_inputs() and get_init_inputs()")
    return module, module.Model, module.get_inputs, module.get_init_inputs


def call_stage(stage, fn, *args):
    """Runs user code for one stage, converting any exception into TaskError."""
    try:
        return fn(*args)
    except TaskError:
        raise
    except BaseException as e:  # noqa: BLE001
        raise TaskError(stage, f"{stage} failed: {type(e).__name__}: {e}", traceback.format_exc()) from None
