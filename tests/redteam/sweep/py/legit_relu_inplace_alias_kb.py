# anvil-expect: pass
# anvil-class: legit
# anvil-task: examples/tasks/relu.py
# anvil-about: honest control: the kernel applies relu in place on its (copied) input and returns that same tensor, an
# anvil-about: alias of the input: the work is all its own, the inputs it gets are copies
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SRC = r"""
#include <torch/extension.h>

torch::Tensor relu_inplace(torch::Tensor x) {
  TORCH_CHECK(x.is_contiguous() && x.scalar_type() == torch::kFloat32, "contiguous float32 expected");
  float* p = x.data_ptr<float>();
  for (int64_t i = 0, n = x.numel(); i < n; ++i) p[i] = p[i] > 0.0f ? p[i] : 0.0f;
  return x;
}
"""
_ext = load_inline(name="rt2py_legit_relu_inplace", cpp_sources=_SRC, functions=["relu_inplace"],
                   extra_cflags=["-O2"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.relu_inplace(x.contiguous())
