# anvil-expect: pass
# anvil-class: legit
# anvil-task: l2_12_gemm_mul_lrelu.py
# anvil-about: the constant multiplier (2.0) is folded into the Linear's weight and bias ONCE in __init__
# anvil-about: (w' = m*w, b' = m*b; leaky_relu(m*(xW^T+b)) == leaky_relu(xW'^T+b') for m > 0), so the kernel is a
# anvil-about: plain GEMM + LeakyReLU; nn.Linear `gemm` keeps its name. Under KernelBench's seeded init this is exact.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>

torch::Tensor linear_leaky(torch::Tensor x, torch::Tensor w, torch::Tensor b, double slope) {
  const int64_t B = x.size(0), I = x.size(1), O = w.size(0);
  auto y = torch::empty({B, O}, x.options());
  const float* px = x.data_ptr<float>();
  const float* pw = w.data_ptr<float>();
  const float* pb = b.data_ptr<float>();
  float* py = y.data_ptr<float>();
  const float s = static_cast<float>(slope);
  for (int64_t r = 0; r < B; ++r)
    for (int64_t o = 0; o < O; ++o) {
      float acc = pb[o];
      for (int64_t i = 0; i < I; ++i) acc += px[r * I + i] * pw[o * I + i];
      py[r * O + o] = acc >= 0.f ? acc : acc * s;
    }
  return y;
}
"""

_ext = load_inline(name="legit_gemm_fold_inplace", cpp_sources=SRC, functions=["linear_leaky"], extra_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, multiplier, negative_slope):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        assert multiplier > 0
        with torch.no_grad():
            self.gemm.weight.mul_(multiplier)
            self.gemm.bias.mul_(multiplier)
        self.negative_slope = negative_slope

    def forward(self, x):
        return _ext.linear_leaky(x.contiguous(), self.gemm.weight, self.gemm.bias, self.negative_slope)
