# anvil-expect: pass
# anvil-class: legit
# anvil-task: l2_12_gemm_mul_lrelu.py
# anvil-about: the (square, 64x64) Linear weight is stored pre-transposed ONCE in __init__ (gemm.weight.data =
# anvil-about: W^T contiguous) so the kernel streams it as [I, O] (i-k-j loop); name and shape unchanged.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
#include <vector>

torch::Tensor gemm_t_leaky(torch::Tensor x, torch::Tensor wt, torch::Tensor b, double mult, double slope) {
  const int64_t B = x.size(0), I = x.size(1), O = wt.size(1);
  auto y = torch::empty({B, O}, x.options());
  const float* px = x.data_ptr<float>();
  const float* pw = wt.data_ptr<float>();
  const float* pb = b.data_ptr<float>();
  float* py = y.data_ptr<float>();
  std::vector<float> acc(O);
  for (int64_t r = 0; r < B; ++r) {
    for (int64_t o = 0; o < O; ++o) acc[o] = pb[o];
    for (int64_t i = 0; i < I; ++i) {
      const float xv = px[r * I + i];
      const float* wr = pw + i * O;
      for (int64_t o = 0; o < O; ++o) acc[o] += xv * wr[o];
    }
    for (int64_t o = 0; o < O; ++o) {
      const float v = acc[o] * static_cast<float>(mult);
      py[r * O + o] = v >= 0.f ? v : v * static_cast<float>(slope);
    }
  }
  return y;
}
"""

_ext = load_inline(name="legit_gemm_pretransposed_sq", cpp_sources=SRC, functions=["gemm_t_leaky"],
                   extra_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, multiplier, negative_slope):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.gemm.weight.data = self.gemm.weight.data.t().contiguous()   # now [in, out]
        self.multiplier = multiplier
        self.negative_slope = negative_slope

    def forward(self, x):
        return _ext.gemm_t_leaky(x.contiguous(), self.gemm.weight, self.gemm.bias, self.multiplier,
                                 self.negative_slope)
