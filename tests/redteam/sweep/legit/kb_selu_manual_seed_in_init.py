# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_27_selu.py
# anvil-about: torch.manual_seed(0) in __init__ (a habit from test scripts; this model has no parameters, so the seed
# anvil-about: changes nothing the comparison sees); super().__init__() first.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
#include <cmath>
torch::Tensor selu(torch::Tensor x) {
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  const float* px = xc.data_ptr<float>();
  float* py = y.data_ptr<float>();
  for (int64_t i = 0; i < xc.numel(); ++i)
    py[i] = 1.0507009873554805f * (px[i] > 0.f ? px[i] : 1.6732632423543772f * std::expm1(px[i]));
  return y;
}
"""

_ext = load_inline(name="legit_selu_seed_init", cpp_sources=SRC, functions=["selu"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)

    def forward(self, x):
        return _ext.selu(x)
