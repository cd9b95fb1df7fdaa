# anvil-expect: pass
# anvil-class: legit
# anvil-task: gelu.py
# anvil-about: exact GELU 0.5*x*(1+erf(x/sqrt2)) with at::vec::Vectorized<float>'s own .erf() method (torch's SIMD
# anvil-about: header, no ATen op dispatched), scalar std::erf tail.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
#include <ATen/cpu/vec/vec.h>
#include <cmath>

using Vec = at::vec::Vectorized<float>;

torch::Tensor gelu_forward(torch::Tensor x) {
  auto y = torch::empty_like(x);
  const float* px = x.data_ptr<float>();
  float* py = y.data_ptr<float>();
  const int64_t n = x.numel();
  const Vec half(0.5f), one(1.0f), inv_sqrt2(0.70710678118654752f);
  int64_t i = 0;
  for (; i + Vec::size() <= n; i += Vec::size()) {
    Vec v = Vec::loadu(px + i);
    Vec r = half * v * (one + (v * inv_sqrt2).erf());
    r.store(py + i);
  }
  for (; i < n; ++i) py[i] = 0.5f * px[i] * (1.0f + std::erf(px[i] * 0.70710678118654752f));
  return y;
}
"""

_gelu = load_inline(name="legit_gelu_atvec_erf", cpp_sources=SRC, functions=["gelu_forward"], extra_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _gelu.gelu_forward(x.contiguous())
