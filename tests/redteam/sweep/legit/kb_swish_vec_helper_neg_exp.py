# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_25_swish.py
# anvil-about: swish x*sigmoid(x) with at::vec: a helper `static inline Vec silu(Vec x)` computes
# anvil-about: x / (1 + x.neg().exp()) on a SIMD vector named x; the wrapper's tensor parameter is also named x.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
#include <ATen/cpu/vec/vec.h>
#include <cmath>

using Vec = at::vec::Vectorized<float>;

static inline Vec silu(Vec x) { return x / (Vec(1.0f) + x.neg().exp()); }

torch::Tensor swish_forward(torch::Tensor x) {
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  const float* px = xc.data_ptr<float>();
  float* py = y.data_ptr<float>();
  const int64_t n = xc.numel();
  int64_t i = 0;
  for (; i + Vec::size() <= n; i += Vec::size()) silu(Vec::loadu(px + i)).store(py + i);
  for (; i < n; ++i) py[i] = px[i] / (1.0f + std::exp(-px[i]));
  return y;
}
"""

_sw = load_inline(name="legit_swish_vec_helper", cpp_sources=SRC, functions=["swish_forward"], extra_cflags=["-O3"])


class ModelNew(nn.Module):
    def forward(self, x):
        return _sw.swish_forward(x)
