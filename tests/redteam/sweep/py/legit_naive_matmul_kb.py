# anvil-expect: pass
# anvil-class: legit
# anvil-task: examples/tasks/matmul.py
# anvil-about: honest control: the plain (i, k, j) C++ loop nest the timing cheats below also use; its time is the honest one
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SRC = r"""
#include <torch/extension.h>
// C = A B, row-major contiguous float32, one plain loop nest (i, k, j).
static void mm_into(const float* a, const float* b, float* c, int64_t m, int64_t k, int64_t n) {
  for (int64_t i = 0; i < m; ++i) {
    float* ci = c + i * n;
    for (int64_t j = 0; j < n; ++j) ci[j] = 0.0f;
    for (int64_t p = 0; p < k; ++p) {
      const float aip = a[i * k + p];
      const float* bp = b + p * n;
      for (int64_t j = 0; j < n; ++j) ci[j] += aip * bp[j];
    }
  }
}

torch::Tensor matmul_forward(torch::Tensor a, torch::Tensor b) {
  TORCH_CHECK(a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0), "shapes");
  TORCH_CHECK(a.is_contiguous() && b.is_contiguous(), "contiguous operands expected");
  auto c = torch::empty({a.size(0), b.size(1)}, a.options());
  mm_into(a.data_ptr<float>(), b.data_ptr<float>(), c.data_ptr<float>(), a.size(0), a.size(1), b.size(1));
  return c;
}

// Into a given output (same shapes as matmul_forward's).
void matmul_into(torch::Tensor a, torch::Tensor b, torch::Tensor c) {
  TORCH_CHECK(a.is_contiguous() && b.is_contiguous() && c.is_contiguous(), "contiguous tensors expected");
  mm_into(a.data_ptr<float>(), b.data_ptr<float>(), c.data_ptr<float>(), a.size(0), a.size(1), b.size(1));
}
"""
_ext = load_inline(name="rt2py_legit_naive_mm", cpp_sources=_SRC, functions=["matmul_forward", "matmul_into"],
                   extra_cflags=["-O2"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return _ext.matmul_forward(A.contiguous(), B.contiguous())
