# anvil-expect: pass
# anvil-class: legit
# anvil-task: gelu.py
# anvil-about: `using namespace at;` (for Tensor/empty_like without prefixes) and the candidate's own GELU written
# anvil-about: as a local lambda named `gelu`, called gelu(v) in the loop (std::erf inside).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
#include <cmath>

using namespace at;

Tensor gelu_exact(const Tensor& x_in) {
  Tensor x = x_in.contiguous();
  Tensor y = empty_like(x);
  const float* px = x.data_ptr<float>();
  float* py = y.data_ptr<float>();
  auto gelu = [](float v) { return 0.5f * v * (1.0f + std::erf(v * 0.7071067811865476f)); };
  for (int64_t i = 0, n = x.numel(); i < n; ++i) py[i] = gelu(px[i]);
  return y;
}
"""

ext = load_inline(name="legit_gelu_using_at_lambda", cpp_sources=SRC, functions=["gelu_exact"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.gelu_exact(x)
