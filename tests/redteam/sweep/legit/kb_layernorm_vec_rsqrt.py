# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_40_layernorm.py
# anvil-about: LayerNorm with at::vec::Vectorized<float>: the row's reciprocal std computed with the vector
# anvil-about: wrapper's own .rsqrt() method (a SIMD instruction wrapper, no ATen op); weight/bias as own Parameters.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
#include <ATen/cpu/vec/vec.h>

using fVec = at::vec::Vectorized<float>;

torch::Tensor ln_forward(torch::Tensor x, torch::Tensor w, torch::Tensor b, double eps) {
  const int64_t C = w.numel();
  const int64_t R = x.numel() / C;
  auto y = torch::empty_like(x);
  const float* px = x.data_ptr<float>();
  const float* pw = w.data_ptr<float>();
  const float* pb = b.data_ptr<float>();
  float* py = y.data_ptr<float>();
  const int64_t W = fVec::size();
  for (int64_t r = 0; r < R; ++r) {
    const float* xr = px + r * C;
    float* yr = py + r * C;
    double s = 0, ss = 0;
    for (int64_t c = 0; c < C; ++c) { s += xr[c]; ss += double(xr[c]) * xr[c]; }
    const float mean = float(s / C);
    const float var = float(ss / C - (s / C) * (s / C));
    const float rstd = (fVec(var + float(eps))).rsqrt()[0];
    const fVec vmean(mean), vrstd(rstd);
    int64_t c = 0;
    for (; c + W <= C; c += W) {
      fVec v = (fVec::loadu(xr + c) - vmean) * vrstd * fVec::loadu(pw + c) + fVec::loadu(pb + c);
      v.store(yr + c);
    }
    for (; c < C; ++c) yr[c] = (xr[c] - mean) * rstd * pw[c] + pb[c];
  }
  return y;
}
"""

_ln = load_inline(name="legit_layernorm_vec_rsqrt", cpp_sources=SRC, functions=["ln_forward"], extra_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self, normalized_shape):
        super().__init__()
        # The same names and values as nn.LayerNorm's: ones/zeros, elementwise affine.
        self.ln = nn.Module()
        self.ln.weight = nn.Parameter(torch.ones(normalized_shape))
        self.ln.bias = nn.Parameter(torch.zeros(normalized_shape))
        self.eps = 1e-5

    def forward(self, x):
        return _ln.ln_forward(x.contiguous(), self.ln.weight, self.ln.bias, self.eps)
