# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_47_sum_reduce.py
# anvil-about: sum over dim with keepdim: the kernel returns [B, M] and forward restores the kept dim with
# anvil-about: .unsqueeze(self.dim); double accumulation; OpenMP parallel over B*M with extra_ldflags -fopenmp.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>

torch::Tensor sum_dim1(torch::Tensor x) {
  const int64_t B = x.size(0), N = x.size(1), M = x.size(2);
  auto out = torch::empty({B, M}, x.options());
  const float* px = x.data_ptr<float>();
  float* po = out.data_ptr<float>();
  #pragma omp parallel for
  for (int64_t bm = 0; bm < B * M; ++bm) {
    const int64_t b = bm / M, m = bm % M;
    double acc = 0.0;
    for (int64_t k = 0; k < N; ++k) acc += px[(b * N + k) * M + m];
    po[bm] = static_cast<float>(acc);
  }
  return out;
}
"""

_sum = load_inline(name="legit_sum_keepdim", cpp_sources=SRC, functions=["sum_dim1"],
                   extra_cflags=["-O2", "-fopenmp"], extra_ldflags=["-fopenmp"])


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return _sum.sum_dim1(x.contiguous()).unsqueeze(self.dim)
