# anvil-expect: pass
# anvil-class: legit
# anvil-task: examples/tasks/matmul.py
# anvil-about: honest, odd layout: the kernel computes C^T contiguous ([N, M]) and returns its .t() view, a
# anvil-about: non-contiguous [M, N] output with the right values
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SRC = r"""
#include <torch/extension.h>

// ct[j, i] = sum_p a[i, p] b[p, j]
torch::Tensor matmul_transposed(torch::Tensor a, torch::Tensor b) {
  TORCH_CHECK(a.is_contiguous() && b.is_contiguous(), "contiguous operands expected");
  const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  auto ct = torch::empty({n, m}, a.options());
  const float* pa = a.data_ptr<float>();
  const float* pb = b.data_ptr<float>();
  float* pc = ct.data_ptr<float>();
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) {
      float acc = 0.0f;
      for (int64_t p = 0; p < k; ++p) acc += pa[i * k + p] * pb[p * n + j];
      pc[j * m + i] = acc;
    }
  return ct;
}
"""
_ext = load_inline(name="rt2py_o_transposed", cpp_sources=_SRC, functions=["matmul_transposed"], extra_cflags=["-O2"],
                   verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return _ext.matmul_transposed(A.contiguous(), B.contiguous()).t()
