# anvil-expect: pass
# anvil-class: legit
# anvil-task: l2_12_gemm_mul_lrelu.py
# anvil-about: a small Python "epilogue plan" object built in __init__ keeps references to the Linear's weight and
# anvil-about: bias plus the scalars, and forward hands plan.weight / plan.bias to the kernel (no copies, no cache).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>

torch::Tensor gemm_mul_leaky(torch::Tensor x, torch::Tensor w, torch::Tensor b, double mult, double slope) {
  const int64_t B = x.size(0), I = x.size(1), O = w.size(0);
  auto y = torch::empty({B, O}, x.options());
  const float* px = x.data_ptr<float>();
  const float* pw = w.data_ptr<float>();
  const float* pb = b.data_ptr<float>();
  float* py = y.data_ptr<float>();
  for (int64_t r = 0; r < B; ++r)
    for (int64_t o = 0; o < O; ++o) {
      float acc = pb[o];
      for (int64_t i = 0; i < I; ++i) acc += px[r * I + i] * pw[o * I + i];
      acc *= static_cast<float>(mult);
      py[r * O + o] = acc >= 0.f ? acc : acc * static_cast<float>(slope);
    }
  return y;
}
"""

_ext = load_inline(name="legit_gemm_param_holder", cpp_sources=SRC, functions=["gemm_mul_leaky"],
                   extra_cflags=["-O3"])


class _EpiloguePlan:
    """What the fused kernel needs, gathered once."""

    def __init__(self, linear: nn.Linear, multiplier: float, slope: float):
        self.weight = linear.weight
        self.bias = linear.bias
        self.multiplier = float(multiplier)
        self.slope = float(slope)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, multiplier, negative_slope):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.plan = _EpiloguePlan(self.gemm, multiplier, negative_slope)

    def forward(self, x):
        p = self.plan
        return _ext.gemm_mul_leaky(x.contiguous(), p.weight, p.bias, p.multiplier, p.slope)
