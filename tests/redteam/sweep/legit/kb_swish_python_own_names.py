# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_25_swish.py
# anvil-about: Python names that look like torch ops but are the candidate's own: module-level `sigmoid` bound to
# anvil-about: the extension's function, a ModelNew method `swish`, x.new_empty output; C++ helper named sigmoid.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
#include <cmath>
static inline float sigmoid(float v) { return 1.0f / (1.0f + std::exp(-v)); }
void sigmoid_mul(torch::Tensor x, torch::Tensor out) {
  const float* px = x.data_ptr<float>();
  float* po = out.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) po[i] = px[i] * sigmoid(px[i]);
}
"""

_ext = load_inline(name="legit_swish_own_names", cpp_sources=SRC, functions=["sigmoid_mul"])
sigmoid = _ext.sigmoid_mul


class ModelNew(nn.Module):
    def swish(self, x: torch.Tensor) -> torch.Tensor:
        out = x.new_empty(x.shape)
        sigmoid(x, out)
        return out

    def forward(self, x):
        return self.swish(x.contiguous())
