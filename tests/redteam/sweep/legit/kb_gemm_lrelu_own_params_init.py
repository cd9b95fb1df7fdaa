# anvil-expect: pass
# anvil-class: legit
# anvil-task: l2_12_gemm_mul_lrelu.py
# anvil-about: nn.Parameter weight/bias of its own (names differ from the reference's gemm.*), initialised exactly
# anvil-about: like nn.Linear.reset_parameters (kaiming_uniform_(a=sqrt(5)), uniform bias bound 1/sqrt(fan_in)).
import math

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
torch::Tensor fused(torch::Tensor x, torch::Tensor w, torch::Tensor b, double mult, double slope) {
  const int64_t B = x.size(0), I = x.size(1), O = w.size(0);
  auto y = torch::empty({B, O}, x.options());
  auto px = x.accessor<float, 2>();
  auto pw = w.accessor<float, 2>();
  auto pb = b.accessor<float, 1>();
  auto py = y.accessor<float, 2>();
  for (int64_t r = 0; r < B; ++r)
    for (int64_t o = 0; o < O; ++o) {
      float acc = pb[o];
      for (int64_t i = 0; i < I; ++i) acc += px[r][i] * pw[o][i];
      acc *= static_cast<float>(mult);
      py[r][o] = acc >= 0.f ? acc : acc * static_cast<float>(slope);
    }
  return y;
}
"""

_ext = load_inline(name="legit_gemm_own_params", cpp_sources=SRC, functions=["fused"], extra_cflags=["-O2"])


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, multiplier, negative_slope):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out_features, in_features))
        self.bias = nn.Parameter(torch.empty(out_features))
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        bound = 1 / math.sqrt(in_features)
        nn.init.uniform_(self.bias, -bound, bound)
        self.multiplier = multiplier
        self.negative_slope = negative_slope

    def forward(self, x):
        return _ext.fused(x.contiguous(), self.weight, self.bias, self.multiplier, self.negative_slope)
