# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_51_argmax.py
# anvil-about: argmax with a static helper and torch::kInt64 output (torch::TensorOptions), general dim via
# anvil-about: x.transpose(dim, -1).contiguous() in forward; returns int64 like torch.argmax.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>

static int64_t first_argmax(const float* p, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < n; ++i) if (p[i] > p[best]) best = i;
  return best;
}

torch::Tensor argmax_last(torch::Tensor x) {
  const int64_t n = x.size(-1);
  const int64_t rows = x.numel() / n;
  std::vector<int64_t> shape(x.sizes().begin(), x.sizes().end() - 1);
  auto out = torch::empty(shape, torch::TensorOptions().dtype(torch::kInt64).device(x.device()));
  const float* px = x.data_ptr<float>();
  int64_t* po = out.data_ptr<int64_t>();
  for (int64_t r = 0; r < rows; ++r) po[r] = first_argmax(px + r * n, n);
  return out;
}
"""

ext = load_inline(name="legit_argmax_last", cpp_sources=SRC, functions=["argmax_last"], extra_cflags=["-O2"])


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return ext.argmax_last(x.transpose(self.dim, -1).contiguous())
