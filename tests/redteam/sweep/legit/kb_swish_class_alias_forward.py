# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_25_swish.py
# anvil-about: the implementation is chosen per platform at class level: `forward = _forward_cpu` (a class
# anvil-about: attribute alias of a method), plus an instance attribute holding the chosen extension function.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
#include <cmath>
torch::Tensor swish(torch::Tensor x) {
  auto y = torch::empty_like(x);
  const float* px = x.data_ptr<float>();
  float* py = y.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) py[i] = px[i] / (1.f + std::exp(-px[i]));
  return y;
}
"""

_ext = load_inline(name="legit_swish_alias_fwd", cpp_sources=SRC, functions=["swish"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._kernel = _ext.swish

    def _forward_cpu(self, x: torch.Tensor) -> torch.Tensor:
        return self._kernel(x.contiguous())

    forward = _forward_cpu
