# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_24_logsoftmax.py
# anvil-about: log_softmax over self.dim (a scalar attribute from the constructor, default 1): dim normalised in
# anvil-about: Python, x.movedim(dim, -1).contiguous(), kernel over the last dim, movedim back; numeric_limits,
# anvil-about: std::max, expf/logf, a docstring that names torch.log_softmax.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
#include <cmath>
#include <limits>
#include <algorithm>

torch::Tensor log_softmax_last(torch::Tensor x) {
  TORCH_CHECK(x.is_contiguous(), "contiguous input expected");
  const int64_t C = x.size(-1);
  const int64_t R = x.numel() / C;
  auto y = torch::empty_like(x);
  const float* px = x.data_ptr<float>();
  float* py = y.data_ptr<float>();
  for (int64_t r = 0; r < R; ++r) {
    const float* xr = px + r * C;
    float m = std::numeric_limits<float>::lowest();
    for (int64_t c = 0; c < C; ++c) m = std::max(m, xr[c]);
    float s = 0.f;
    for (int64_t c = 0; c < C; ++c) s += expf(xr[c] - m);
    const float lse = m + logf(s);
    for (int64_t c = 0; c < C; ++c) py[r * C + c] = xr[c] - lse;
  }
  return y;
}
"""

lsm = load_inline(name="legit_logsoftmax_movedim", cpp_sources=SRC, functions=["log_softmax_last"],
                  extra_cflags=["-O3", "-ffast-math"])


class ModelNew(nn.Module):
    """Same contract as torch.log_softmax(x, dim=self.dim)."""

    def __init__(self, dim: int = 1):
        super(ModelNew, self).__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        d = self.dim % x.dim()
        moved = d != x.dim() - 1
        xin = x.movedim(d, -1).contiguous() if moved else x.contiguous()
        y = lsm.log_softmax_last(xin)
        return y.movedim(-1, d) if moved else y
