# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_89_cumsum.py
# anvil-about: cumsum wrapped in a torch.autograd.Function (forward calls the extension, backward is a reverse
# anvil-about: cumsum kernel of its own), ModelNew calls _CumSum.apply(x, dim); double running sum.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>

torch::Tensor cumsum_rows(torch::Tensor x, bool reverse) {
  auto y = torch::empty_like(x);
  const int64_t C = x.size(-1), R = x.numel() / C;
  const float* px = x.data_ptr<float>();
  float* py = y.data_ptr<float>();
  for (int64_t r = 0; r < R; ++r) {
    double run = 0;
    if (!reverse) {
      for (int64_t c = 0; c < C; ++c) { run += px[r * C + c]; py[r * C + c] = static_cast<float>(run); }
    } else {
      for (int64_t c = C - 1; c >= 0; --c) { run += px[r * C + c]; py[r * C + c] = static_cast<float>(run); }
    }
  }
  return y;
}
"""

scan = load_inline(name="legit_cumsum_autograd", cpp_sources=SRC, functions=["cumsum_rows"], extra_cflags=["-O2"])


class _CumSum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, dim):
        ctx.dim = dim
        return scan.cumsum_rows(x.contiguous(), False)

    @staticmethod
    def backward(ctx, grad):
        return scan.cumsum_rows(grad.contiguous(), True), None


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        assert self.dim in (1, -1) and x.dim() == 2
        return _CumSum.apply(x, self.dim)
