# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_89_cumsum.py
# anvil-about: the scan is computed into a std::vector<float> and returned with torch::from_blob(...).clone()
# anvil-about: (allocation + copy), a common way to hand a C++ buffer back; std::partial_sum over doubles.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
#include <numeric>
#include <vector>

torch::Tensor cumsum_lastdim(torch::Tensor x) {
  const int64_t C = x.size(-1), R = x.numel() / C;
  const float* px = x.data_ptr<float>();
  std::vector<double> row(C);
  std::vector<float> out(static_cast<size_t>(x.numel()));
  for (int64_t r = 0; r < R; ++r) {
    std::partial_sum(px + r * C, px + (r + 1) * C, row.begin(), [](double a, double b) { return a + b; });
    for (int64_t c = 0; c < C; ++c) out[r * C + c] = static_cast<float>(row[c]);
  }
  return torch::from_blob(out.data(), x.sizes(), torch::TensorOptions().dtype(torch::kFloat32)).clone();
}
"""

_scan = load_inline(name="legit_cumsum_from_blob", cpp_sources=SRC, functions=["cumsum_lastdim"], extra_cflags=["-O2"])


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        if self.dim in (-1, x.dim() - 1):
            return _scan.cumsum_lastdim(x.contiguous())
        return _scan.cumsum_lastdim(x.transpose(self.dim, -1).contiguous()).transpose(self.dim, -1)
