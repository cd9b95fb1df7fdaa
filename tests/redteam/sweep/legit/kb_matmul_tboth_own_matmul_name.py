# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_18_matmul_tboth.py
# anvil-about: A.T @ B.T: forward makes the operands row-major with .t().contiguous() (plumbing) and calls the
# anvil-about: candidate's OWN C++ function named `matmul` (a plain i-k-j GEMM); functions=[...] list.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_src = r"""
#include <torch/extension.h>

// Plain row-major GEMM: c[M,N] = a[M,K] * b[K,N].
torch::Tensor matmul(torch::Tensor a, torch::Tensor b) {
  TORCH_CHECK(a.is_contiguous() && b.is_contiguous(), "matmul: contiguous operands");
  TORCH_CHECK(a.size(1) == b.size(0), "matmul: shape mismatch");
  const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  torch::Tensor c = torch::zeros({M, N}, a.options());
  const float* pa = a.data_ptr<float>();
  const float* pb = b.data_ptr<float>();
  float* pc = c.data_ptr<float>();
  for (int64_t i = 0; i < M; ++i) {
    float* crow = pc + i * N;
    for (int64_t k = 0; k < K; ++k) {
      const float aik = pa[i * K + k];
      const float* brow = pb + k * N;
      for (int64_t j = 0; j < N; ++j) crow[j] += aik * brow[j];
    }
  }
  return c;
}
"""

_ext = load_inline(name="legit_matmul_tboth_named", cpp_sources=[_src], functions=["matmul"],
                   extra_cflags=["-O2"])


class ModelNew(nn.Module):
    """A.T @ B.T, as torch.matmul(A.T, B.T) in the reference, with a custom GEMM."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        a = A.t().contiguous()   # [M, K]
        b = B.t().contiguous()   # [K, N]
        matmul = _ext.matmul
        return matmul(a, b)
