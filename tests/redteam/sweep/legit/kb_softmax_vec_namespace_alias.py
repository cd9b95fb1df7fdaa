# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_23_softmax.py
# anvil-about: ATen's own idiom for its SIMD helpers: `namespace vec = at::vec;` then vec::Vectorized<float>,
# anvil-about: vec::maximum and vec::vec_reduce_all (as in ATen's CPU kernels); no ATen op anywhere.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
#include <ATen/cpu/vec/vec.h>
#include <ATen/cpu/vec/functional.h>
#include <cmath>
#include <limits>

namespace vec = at::vec;
using fVec = vec::Vectorized<float>;

torch::Tensor softmax_vec(torch::Tensor x) {
  const int64_t R = x.size(0), C = x.size(1);
  auto y = torch::empty_like(x);
  const float* px = x.data_ptr<float>();
  float* py = y.data_ptr<float>();
  for (int64_t r = 0; r < R; ++r) {
    const float* xr = px + r * C;
    float* yr = py + r * C;
    fVec vm(-std::numeric_limits<float>::infinity());
    int64_t c = 0;
    for (; c + fVec::size() <= C; c += fVec::size()) vm = vec::maximum(vm, fVec::loadu(xr + c));
    float m = vec::vec_reduce_all<float>([](fVec& a, fVec& b) { return vec::maximum(a, b); }, vm);
    for (; c < C; ++c) m = std::max(m, xr[c]);
    float s = 0.f;
    for (c = 0; c < C; ++c) { yr[c] = std::exp(xr[c] - m); s += yr[c]; }
    for (c = 0; c < C; ++c) yr[c] /= s;
  }
  return y;
}
"""

_ext = load_inline(name="legit_softmax_vec_alias", cpp_sources=SRC, functions=["softmax_vec"], extra_cflags=["-O3"])


class ModelNew(nn.Module):
    def forward(self, x):
        return _ext.softmax_vec(x.contiguous())
