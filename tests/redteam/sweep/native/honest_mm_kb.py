# anvil-expect: pass
# anvil-class: legit
# anvil-task: mm256.py
# anvil-about: honest control: C = A @ B as a C++ loop nest in a load_inline extension, rows split with at::parallel_for
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_ext = load_inline(
    name="rt2_honest_mm_kb",
    cpp_sources=r"""
#include <ATen/Parallel.h>
torch::Tensor mm_forward(torch::Tensor a, torch::Tensor b) {
  a = a.contiguous();
  b = b.contiguous();
  const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  auto c = torch::zeros({m, n}, a.options());
  const float* pa = a.data_ptr<float>();
  const float* pb = b.data_ptr<float>();
  float* pc = c.data_ptr<float>();
  at::parallel_for(0, m, 8, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i)
      for (int64_t p = 0; p < k; ++p) {
        const float s = pa[i * k + p];
        for (int64_t j = 0; j < n; ++j) pc[i * n + j] += s * pb[p * n + j];
      }
  });
  return c;
}
""",
    functions=["mm_forward"],
    extra_cflags=["-O2"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return _ext.mm_forward(A, B)
