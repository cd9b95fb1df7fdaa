# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_17_matmul_tB.py
# anvil-about: twin of kb_matmul_tB_dotT_contiguous.py with Tensor.mT: forward makes B.mT (matrix transpose) contiguous (a transpose copy, plumbing)
# anvil-about: and calls a plain row-major GEMM C = A @ Bt written in C++.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
torch::Tensor gemm_nn(torch::Tensor a, torch::Tensor b) {
  const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  auto c = torch::zeros({M, N}, a.options());
  const float* pa = a.data_ptr<float>(); const float* pb = b.data_ptr<float>(); float* pc = c.data_ptr<float>();
  for (int64_t i = 0; i < M; ++i)
    for (int64_t k = 0; k < K; ++k) {
      const float v = pa[i * K + k];
      for (int64_t j = 0; j < N; ++j) pc[i * N + j] += v * pb[k * N + j];
    }
  return c;
}
"""

_ext = load_inline(name="legit_mm_dotmT", cpp_sources=SRC, functions=["gemm_nn"], extra_cflags=["-O3"])


class ModelNew(nn.Module):
    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return _ext.gemm_nn(A.contiguous(), B.mT.contiguous())
