# anvil-expect: pass
# anvil-class: legit
# anvil-task: gelu.py
# anvil-about: a class docstring that reports how the kernel was profiled ("measured with torch.autograd.profiler")
# anvil-about: — prose in a docstring, no use of the profiler.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
#include <cmath>
torch::Tensor gelu(torch::Tensor x) {
  auto y = torch::empty_like(x);
  const float* px = x.data_ptr<float>();
  float* py = y.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) py[i] = 0.5f * px[i] * (1.f + std::erf(px[i] * 0.70710678f));
  return y;
}
"""

_ext = load_inline(name="legit_gelu_docstring", cpp_sources=SRC, functions=["gelu"], extra_cflags=["-O3"])


class ModelNew(nn.Module):
    """Exact GELU in one pass; about 2x eager on CPU, measured with torch.autograd.profiler."""

    def forward(self, x):
        return _ext.gelu(x.contiguous())
