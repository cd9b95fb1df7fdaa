# anvil-expect: cheat
# anvil-class: B4
# anvil-task: examples/tasks/matmul.py
# anvil-about: lazy output in a list subclass (tensor subclasses are rejected, list subclasses are not): forward only keeps its inputs; the product is computed, with
# anvil-about: torch.matmul, the first time the worker iterates the list (writing a trial, copying a timed call's output) - outside the traced forward and outside the timed window
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SRC = r"""
#include <torch/extension.h>
// Decoy: checks the operands and hands A back.
torch::Tensor check_operands(torch::Tensor a, torch::Tensor b) {
  TORCH_CHECK(a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0), "shapes");
  return a;
}
"""
_ext = load_inline(name="rt2py_b4_lazy_list2", cpp_sources=_SRC, functions=["check_operands"], extra_cflags=["-O2"],
                   verbose=False)


def _make():
    f = torch.matmul

    def g(a, b):
        return f(a, b)
    return g


_MM = _make()


class _Later(list):
    def __init__(self, *args):
        if len(args) == 2 and all(isinstance(t, torch.Tensor) for t in args):
            super().__init__()
            self.a, self.b = args  # the operands: nothing is computed yet
        else:
            super().__init__(*args)  # a copy the worker makes of an evaluated one

    def __iter__(self):
        if not super().__len__():
            super().append(_MM(self.a, self.b))
        return super().__iter__()


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return _Later(_ext.check_operands(A, B), B)
