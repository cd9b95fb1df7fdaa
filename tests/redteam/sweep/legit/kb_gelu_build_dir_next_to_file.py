# anvil-expect: pass
# anvil-class: legit
# anvil-task: gelu.py
# anvil-about: build_directory= a "build" folder next to the source file (os.makedirs(..., exist_ok=True)), as
# anvil-about: scripts that keep their extension builds beside them do.
import os

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
#include <cmath>
torch::Tensor gelu(torch::Tensor x) {
  auto y = torch::empty_like(x);
  const float* px = x.data_ptr<float>();
  float* py = y.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) py[i] = 0.5f * px[i] * (1.f + erff(px[i] * 0.70710678f));
  return y;
}
"""

_build_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "build_gelu_ext")
os.makedirs(_build_dir, exist_ok=True)
_ext = load_inline(name="legit_gelu_local_build", cpp_sources=SRC, functions=["gelu"], build_directory=_build_dir)


class ModelNew(nn.Module):
    def forward(self, x):
        return _ext.gelu(x.contiguous())
