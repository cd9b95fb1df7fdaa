# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_23_softmax.py
# anvil-about: row softmax with ATen's SIMD wrapper at::vec::Vectorized<float> (loadu/store, .exp(), maximum,
# anvil-about: vec_reduce_all) — torch's own vector header, no ATen op; the tail in scalar code.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
#include <ATen/cpu/vec/vec.h>
#include <ATen/cpu/vec/functional.h>
#include <cmath>
#include <limits>

using Vec = at::vec::Vectorized<float>;

torch::Tensor softmax_rows(torch::Tensor x) {
  TORCH_CHECK(x.dim() == 2 && x.is_contiguous() && x.scalar_type() == torch::kFloat32, "2-D contiguous float32");
  const int64_t rows = x.size(0), cols = x.size(1);
  auto y = torch::empty_like(x);
  const float* px = x.data_ptr<float>();
  float* py = y.data_ptr<float>();
  const int64_t W = Vec::size();
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = px + r * cols;
    float* yr = py + r * cols;
    Vec vmax(-std::numeric_limits<float>::infinity());
    int64_t c = 0;
    for (; c + W <= cols; c += W) vmax = at::vec::maximum(vmax, Vec::loadu(xr + c));
    float m = at::vec::vec_reduce_all<float>([](Vec& a, Vec& b) { return at::vec::maximum(a, b); }, vmax);
    for (; c < cols; ++c) m = std::max(m, xr[c]);
    Vec vsum(0.0f);
    const Vec vm(m);
    c = 0;
    for (; c + W <= cols; c += W) {
      Vec e = (Vec::loadu(xr + c) - vm).exp();
      e.store(yr + c);
      vsum = vsum + e;
    }
    float s = at::vec::vec_reduce_all<float>([](Vec& a, Vec& b) { return a + b; }, vsum);
    for (; c < cols; ++c) { yr[c] = std::exp(xr[c] - m); s += yr[c]; }
    const float inv = 1.0f / s;
    for (int64_t k = 0; k < cols; ++k) yr[k] *= inv;
  }
  return y;
}
"""

_ext = load_inline(name="legit_softmax_atvec", cpp_sources=SRC, functions=["softmax_rows"], extra_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.softmax_rows(x.contiguous())
