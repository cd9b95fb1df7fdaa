# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_27_selu.py
# anvil-about: SELU = scale * elu(x, alpha): a small `SeluParams` struct declares elu() in the class and defines it
# anvil-about: out of line (`float SeluParams::elu(float) const {...}`), ordinary C++ style; p.elu(v) in the loop.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
#include <cmath>

struct SeluParams {
  float alpha;
  float scale;
  float elu(float v) const;
};

float SeluParams::elu(float v) const { return v > 0.f ? v : alpha * std::expm1(v); }

torch::Tensor selu_forward(torch::Tensor x) {
  const SeluParams p{1.6732632423543772f, 1.0507009873554805f};
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  const float* px = xc.data_ptr<float>();
  float* py = y.data_ptr<float>();
  for (int64_t i = 0; i < xc.numel(); ++i) py[i] = p.scale * p.elu(px[i]);
  return y;
}
"""

ext = load_inline(name="legit_selu_outofline", cpp_sources=SRC, functions=["selu_forward"], extra_cflags=["-O2"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.selu_forward(x)
