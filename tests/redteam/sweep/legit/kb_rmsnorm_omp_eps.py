# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_36_rmsnorm.py
# anvil-about: RMSNorm over dim 1 of [B, C, H, W]: eps and num_features as scalar attributes from the constructor,
# anvil-about: OpenMP collapse(2) over (batch, spatial), @torch.no_grad() on forward, type hints, math module.
import math

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
#include <cmath>

torch::Tensor rms_norm_dim1(torch::Tensor x, double eps) {
  TORCH_CHECK(x.dim() >= 2 && x.is_contiguous(), "contiguous [B, C, ...] expected");
  const int64_t B = x.size(0), C = x.size(1);
  const int64_t S = x.numel() / (B * C);
  auto y = torch::empty_like(x);
  const float* px = x.data_ptr<float>();
  float* py = y.data_ptr<float>();
  #pragma omp parallel for collapse(2)
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t s = 0; s < S; ++s) {
      const float* base = px + b * C * S + s;
      float acc = 0.f;
      for (int64_t c = 0; c < C; ++c) acc += base[c * S] * base[c * S];
      const float inv = 1.0f / std::sqrt(acc / static_cast<float>(C) + static_cast<float>(eps));
      for (int64_t c = 0; c < C; ++c) py[b * C * S + c * S + s] = base[c * S] * inv;
    }
  }
  return y;
}
"""

rms = load_inline(name="legit_rmsnorm_omp", cpp_sources=SRC, functions=["rms_norm_dim1"],
                  extra_cflags=["-O3", "-fopenmp"], extra_ldflags=["-fopenmp"])


class ModelNew(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = float(eps)
        assert math.isfinite(self.eps) and self.eps > 0

    @torch.no_grad()
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        assert x.size(1) == self.num_features, f"expected {self.num_features} features, got {x.size(1)}"
        return rms.rms_norm_dim1(x.contiguous(), self.eps)
