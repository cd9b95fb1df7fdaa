# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_24_logsoftmax.py
# anvil-about: the dim argument is normalised in C++ with at::maybe_wrap_dim (ATen's dim-wrapping helper, pure
# anvil-about: metadata: `-1` -> ndim-1), as ATen's own kernels do; strides computed from x.sizes().
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
#include <ATen/WrapDimUtils.h>
#include <cmath>
#include <limits>

torch::Tensor log_softmax_dim(torch::Tensor x, int64_t dim) {
  dim = at::maybe_wrap_dim(dim, x.dim());
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= xc.size(d);
  for (int64_t d = dim + 1; d < xc.dim(); ++d) inner *= xc.size(d);
  const int64_t n = xc.size(dim);
  const float* px = xc.data_ptr<float>();
  float* py = y.data_ptr<float>();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const float* base = px + o * n * inner + i;
      float m = -std::numeric_limits<float>::infinity();
      for (int64_t k = 0; k < n; ++k) m = std::max(m, base[k * inner]);
      double s = 0;
      for (int64_t k = 0; k < n; ++k) s += std::exp(static_cast<double>(base[k * inner] - m));
      const float lse = m + static_cast<float>(std::log(s));
      for (int64_t k = 0; k < n; ++k) py[o * n * inner + k * inner + i] = base[k * inner] - lse;
    }
  }
  return y;
}
"""

ext = load_inline(name="legit_logsoftmax_wrapdim", cpp_sources=SRC, functions=["log_softmax_dim"])


class ModelNew(nn.Module):
    def __init__(self, dim: int = 1):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return ext.log_softmax_dim(x, self.dim)
