# anvil-expect: pass
# anvil-class: legit
# anvil-task: l2_76_gemm_add_relu.py
# anvil-about: try/except around the BUILD: an -march=native -fopenmp build first, a portable build if that fails
# anvil-about: (no torch fallback anywhere; forward always calls a custom kernel). warnings.warn on fallback.
import warnings

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
torch::Tensor gemm_bias_relu(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
  const int64_t B = x.size(0), I = x.size(1), O = w.size(0);
  auto y = torch::empty({B, O}, x.options());
  const float* px = x.data_ptr<float>();
  const float* pw = w.data_ptr<float>();
  const float* pb = b.data_ptr<float>();
  float* py = y.data_ptr<float>();
  #pragma omp parallel for
  for (int64_t r = 0; r < B; ++r)
    for (int64_t o = 0; o < O; ++o) {
      float acc = 0.f;
      for (int64_t i = 0; i < I; ++i) acc += px[r * I + i] * pw[o * I + i];
      acc += pb[o];
      py[r * O + o] = acc > 0.f ? acc : 0.f;
    }
  return y;
}
"""

try:
    _ext = load_inline(name="legit_try_build_native", cpp_sources=SRC, functions=["gemm_bias_relu"],
                       extra_cflags=["-O3", "-march=native", "-fopenmp"], extra_ldflags=["-fopenmp"])
except Exception as exc:  # noqa: BLE001 - a compiler without -march=native / OpenMP
    warnings.warn(f"optimised build failed ({exc}); using the portable build")
    _ext = load_inline(name="legit_try_build_portable", cpp_sources=SRC, functions=["gemm_bias_relu"],
                       extra_cflags=["-O2"])


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        return _ext.gemm_bias_relu(x.contiguous(), self.gemm.weight, self.bias)
