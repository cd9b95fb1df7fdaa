# anvil-expect: pass
# anvil-class: legit
# anvil-task: gelu.py
# anvil-about: GELU written into an output allocated in Python (torch.empty_like), static inline helper named gelu
# anvil-about: using erff, and a second helper function in Python; the kernel returns nothing.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
#include <cmath>

static inline float gelu(float v) { return 0.5f * v * (1.0f + erff(v * 0.70710678f)); }

void gelu_into(torch::Tensor x, torch::Tensor out) {
  TORCH_CHECK(out.sizes() == x.sizes() && out.is_contiguous() && x.is_contiguous(), "bad output");
  const float* px = x.data_ptr<float>();
  float* po = out.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) po[i] = gelu(px[i]);
}
"""

_k = load_inline(name="legit_gelu_into", cpp_sources=SRC, functions=["gelu_into"], extra_cflags=["-O2"])


def _apply(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x, memory_format=torch.contiguous_format)
    _k.gelu_into(x.contiguous(), out)
    return out


class ModelNew(nn.Module):
    def forward(self, x):
        return _apply(x)
