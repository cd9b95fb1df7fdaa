# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_100_hinge.py
# anvil-about: hinge loss mean(clamp(1 - p*t, min=0)): the broadcast of targets is made explicit in Python with
# anvil-about: targets.expand_as(predictions).contiguous() (a view + copy); the kernel clamps with std::max.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
#include <algorithm>

torch::Tensor hinge_mean(torch::Tensor p, torch::Tensor t) {
  const int64_t n = p.numel();
  const float* pp = p.data_ptr<float>();
  const float* pt = t.data_ptr<float>();
  double acc = 0;
  for (int64_t i = 0; i < n; ++i) acc += std::max(0.0f, 1.0f - pp[i] * pt[i]);
  auto out = torch::empty({}, p.options());
  *out.data_ptr<float>() = static_cast<float>(acc / n);
  return out;
}
"""

ext = load_inline(name="legit_hinge_expand", cpp_sources=SRC, functions=["hinge_mean"], extra_cflags=["-O2"])


class ModelNew(nn.Module):
    def forward(self, predictions, targets):
        t = targets.expand_as(predictions).contiguous()
        return ext.hinge_mean(predictions.contiguous(), t)
