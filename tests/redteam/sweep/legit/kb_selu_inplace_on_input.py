# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_27_selu.py
# anvil-about: an in-place activation like nn.SELU(inplace=True): the kernel overwrites its (contiguous) input and
# anvil-about: forward returns that tensor — no new allocation.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
#include <cmath>
torch::Tensor selu_(torch::Tensor x) {
  TORCH_CHECK(x.is_contiguous(), "selu_: contiguous tensor expected");
  float* p = x.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i)
    p[i] = 1.0507009873554805f * (p[i] > 0.f ? p[i] : 1.6732632423543772f * std::expm1(p[i]));
  return x;
}
"""

_ext = load_inline(name="legit_selu_inplace_input", cpp_sources=SRC, functions=["selu_"])


class ModelNew(nn.Module):
    def __init__(self, inplace: bool = True):
        super().__init__()
        self.inplace = inplace

    def forward(self, x):
        x = x if (self.inplace and x.is_contiguous()) else x.contiguous().clone()
        return _ext.selu_(x)
