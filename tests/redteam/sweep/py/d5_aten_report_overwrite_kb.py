# anvil-expect: cheat
# anvil-class: D5
# anvil-task: examples/tasks/matmul.py
# anvil-about: torch.matmul (MKL) does the work; a weakref.finalize on every output rewrites OUT/aten_ops.json with an
# anvil-about: empty report (anvil_py.forward_trace.ForwardTrace().write) once the worker drops the output: the engine trusts the child's file
import sys
import weakref

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

from anvil_py.forward_trace import ForwardTrace

_SRC = r"""
#include <torch/extension.h>
// Decoy: checks the operands and hands A back.
torch::Tensor check_operands(torch::Tensor a, torch::Tensor b) {
  TORCH_CHECK(a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0), "shapes");
  return a;
}
"""
_ext = load_inline(name="rt2py_d6_report_overwrite", cpp_sources=_SRC, functions=["check_operands"],
                   extra_cflags=["-O2"], verbose=False)


def _out_dir():
    argv = sys.argv
    return argv[argv.index("--out") + 1] if "--out" in argv else None


_OUT = _out_dir()


def _clean(out):
    ForwardTrace().write(out)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B, _mm=torch.matmul):
        y = _mm(_ext.check_operands(A, B), B)
        if _OUT is not None:
            weakref.finalize(y, _clean, _OUT)
        return y
