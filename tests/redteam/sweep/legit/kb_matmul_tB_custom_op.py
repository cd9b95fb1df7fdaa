# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_17_matmul_tB.py
# anvil-about: the extension wrapped as a torch.library.custom_op ("legit::matmul_tb") with a register_fake
# anvil-about: (torch.empty) for tracing; forward calls torch.ops.legit.matmul_tb; B.T handled inside the kernel.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
torch::Tensor mm_tb(torch::Tensor a, torch::Tensor b) {
  const int64_t M = a.size(0), K = a.size(1), N = b.size(0);
  auto c = torch::empty({M, N}, a.options());
  const float* pa = a.data_ptr<float>();
  const float* pb = b.data_ptr<float>();
  float* pc = c.data_ptr<float>();
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.f;
      for (int64_t k = 0; k < K; ++k) s += pa[i * K + k] * pb[j * K + k];
      pc[i * N + j] = s;
    }
  return c;
}
"""

_ext = load_inline(name="legit_custom_op_mmtb", cpp_sources=SRC, functions=["mm_tb"], extra_cflags=["-O3"])


@torch.library.custom_op("legit::matmul_tb", mutates_args=())
def matmul_tb(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return _ext.mm_tb(a.contiguous(), b.contiguous())


@matmul_tb.register_fake
def _(a, b):
    return torch.empty((a.shape[0], b.shape[0]), dtype=a.dtype, device=a.device)


class ModelNew(nn.Module):
    def forward(self, A, B):
        return torch.ops.legit.matmul_tb(A, B)
