# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_49_max_with_indices.py
# anvil-about: returns a tuple (values, indices) from one C++ function returning std::tuple<Tensor, Tensor>;
# anvil-about: int64 indices, first maximum on ties like torch.max.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
#include <tuple>

std::tuple<torch::Tensor, torch::Tensor> max_dim1(torch::Tensor x) {
  const int64_t B = x.size(0), N = x.size(1), M = x.size(2);
  auto values = torch::empty({B, M}, x.options());
  auto indices = torch::empty({B, M}, x.options().dtype(torch::kLong));
  const float* px = x.data_ptr<float>();
  float* pv = values.data_ptr<float>();
  int64_t* pi = indices.data_ptr<int64_t>();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t m = 0; m < M; ++m) {
      float best = px[b * N * M + m];
      int64_t at = 0;
      for (int64_t k = 1; k < N; ++k) {
        const float v = px[(b * N + k) * M + m];
        if (v > best) { best = v; at = k; }
      }
      pv[b * M + m] = best;
      pi[b * M + m] = at;
    }
  return std::make_tuple(values, indices);
}
"""

ext = load_inline(name="legit_max_tuple", cpp_sources=SRC, functions=["max_dim1"], extra_cflags=["-O2"])


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        values, indices = ext.max_dim1(x.contiguous())
        return values, indices
