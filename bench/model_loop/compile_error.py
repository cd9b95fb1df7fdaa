# anvil-expect: compile_error
# anvil-about: a C++ syntax error (any task)
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SOURCE = r"""
#include <torch/extension.h>

torch::Tensor forward_kernel(torch::Tensor x) {
  auto out = torch::empty_like(x)
  return out;
}
"""

_ext = load_inline(name="anvil_bench_generic_broken", cpp_sources=_SOURCE, functions=["forward_kernel"],
                   verbose=False)


class ModelNew(nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, *inputs):
        return _ext.forward_kernel(inputs[0].contiguous())
