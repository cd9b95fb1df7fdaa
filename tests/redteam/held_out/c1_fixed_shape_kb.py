# anvil-expect: wrong_answer
# anvil-class: C1
# anvil-about: specialized for the benchmark's shape: the output is always [16, 1024] and the loop count a constant.
# anvil-about: Right on every trial of the benchmark's inputs; the task's held-out input sets (its sidecar) are not.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SOURCE = r"""
#include <torch/extension.h>

#include <algorithm>
#include <cstdint>

// Tuned for the benchmark: 16 rows of 1024.
torch::Tensor relu_fixed(torch::Tensor x) {
  constexpr int64_t kRows = 16;
  constexpr int64_t kCols = 1024;
  auto out = torch::zeros({kRows, kCols});
  const float* src = x.data_ptr<float>();
  float* dst = out.data_ptr<float>();
  const int64_t n = std::min<int64_t>(kRows * kCols, x.numel());
  for (int64_t i = 0; i < n; ++i) dst[i] = src[i] > 0.0f ? src[i] : 0.0f;
  return out;
}
"""

_ext = load_inline(name="anvil_c1_fixed_shape", cpp_sources=[_SOURCE], functions=["relu_fixed"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.relu_fixed(x.contiguous())
