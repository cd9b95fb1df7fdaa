# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_4_matvec.py
# anvil-about: A @ b (b is [K, 1]) with at::parallel_for (ATen/Parallel.h) and a grain size; b flattened with
# anvil-about: .view(-1) in forward and the [M] result given back its column with .unsqueeze(1).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

src = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>

torch::Tensor matvec(const torch::Tensor& A, const torch::Tensor& v) {
  TORCH_CHECK(A.dim() == 2 && v.dim() == 1 && A.size(1) == v.size(0), "matvec: bad shapes");
  const int64_t M = A.size(0), K = A.size(1);
  auto y = at::empty({M}, A.options());
  const float* a = A.data_ptr<float>();
  const float* x = v.data_ptr<float>();
  float* out = y.data_ptr<float>();
  at::parallel_for(0, M, 16, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      double acc = 0.0;
      const float* row = a + i * K;
      for (int64_t k = 0; k < K; ++k) acc += static_cast<double>(row[k]) * x[k];
      out[i] = static_cast<float>(acc);
    }
  });
  return y;
}
"""

matvec_mod = load_inline(name="legit_matvec_pfor", cpp_sources=src, functions=["matvec"], extra_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, A, B):
        y = matvec_mod.matvec(A.contiguous(), B.contiguous().view(-1))
        return y.unsqueeze(1)
