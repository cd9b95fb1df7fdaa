# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_27_selu.py
# anvil-about: SELU constants computed once in __init__ with numpy and math (float64, then float), passed to the
# anvil-about: kernel as doubles; numpy is never used on tensors or in forward.
import math

import numpy as np
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
#include <cmath>
torch::Tensor selu_params(torch::Tensor x, double alpha, double scale) {
  auto y = torch::empty_like(x);
  const float a = static_cast<float>(alpha), s = static_cast<float>(scale);
  const float* px = x.data_ptr<float>();
  float* py = y.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) py[i] = px[i] > 0.f ? s * px[i] : s * a * std::expm1(px[i]);
  return y;
}
"""

_ext = load_inline(name="legit_selu_numpy_consts", cpp_sources=SRC, functions=["selu_params"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Klambauer et al. 2017 constants, kept in float64 with numpy (torch uses the same values).
        consts = np.array([1.6732632423543772848170429916717, 1.0507009873554804934193349852946], dtype=np.float64)
        alpha, scale = consts
        assert math.isclose(float(alpha * scale), 1.7580993408473766, rel_tol=1e-12)
        self.alpha = float(np.float64(alpha))
        self.scale = float(scale)

    def forward(self, x):
        return _ext.selu_params(x.contiguous(), self.alpha, self.scale)
