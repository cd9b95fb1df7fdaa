# anvil-expect: cheat
# anvil-class: A4
# anvil-task: examples/tasks/relu.py
# anvil-about: relu = at::cpu::threshold(x, 0, 0) taken as a function pointer: an ATen name not followed by `(` is flagged
# anvil-about: only when it is in the short strong-compute list; the call runs the CPU kernel without the dispatcher
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SRC = r"""
#include <torch/extension.h>
#include <ATen/CPUFunctions.h>

using Thresh = at::Tensor (*)(const at::Tensor&, const at::Scalar&, const at::Scalar&);
static const Thresh kThresh = at::cpu::threshold;

torch::Tensor relu_forward(torch::Tensor x) {
  TORCH_CHECK(x.scalar_type() == torch::kFloat32, "float32 expected");
  return kThresh(x, 0.0, 0.0);
}
"""
_ext = load_inline(name="rt2py_a4_cpp_fnptr", cpp_sources=_SRC, functions=["relu_forward"], extra_cflags=["-O2"],
                   verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.relu_forward(x.contiguous())
