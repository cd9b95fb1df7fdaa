# anvil-expect: pass
# anvil-about: row-wise softmax (max-subtracted) as plain C++ loops in a load_inline extension
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# _SOURCE and the load_inline call are byte-identical in softmax/pass_legit_kb.py (one compile for both).
_SOURCE = r"""
#include <torch/extension.h>

#include <cmath>
#include <cstdint>

// Row-wise softmax of a contiguous 2-D float32 CPU tensor into `out` (same shape), max-subtracted.
void softmax_out(torch::Tensor x, torch::Tensor out) {
  TORCH_CHECK(x.device().is_cpu() && out.device().is_cpu(), "expected CPU tensors");
  TORCH_CHECK(x.scalar_type() == torch::kFloat32 && out.scalar_type() == torch::kFloat32,
              "expected float32 tensors");
  TORCH_CHECK(x.dim() == 2 && x.is_contiguous() && out.is_contiguous() && out.sizes() == x.sizes(),
              "expected contiguous 2-D tensors of the same shape");
  const int64_t rows = x.size(0), cols = x.size(1);
  const float* src = x.data_ptr<float>();
  float* dst = out.data_ptr<float>();
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = src + r * cols;
    float* yr = dst + r * cols;
    float max = -INFINITY;
    for (int64_t c = 0; c < cols; ++c) max = xr[c] > max ? xr[c] : max;
    float sum = 0.0f;
    for (int64_t c = 0; c < cols; ++c) {
      yr[c] = std::exp(xr[c] - max);
      sum += yr[c];
    }
    const float inv = 1.0f / sum;
    for (int64_t c = 0; c < cols; ++c) yr[c] *= inv;
  }
}

// Allocating variant: softmax over dim 1 of a 2-D tensor.
torch::Tensor softmax_forward(torch::Tensor x) {
  auto out = torch::empty_like(x);
  softmax_out(x, out);
  return out;
}
"""

_ext = load_inline(
    name="anvil_example_softmax",
    cpp_sources=_SOURCE,
    functions=["softmax_forward", "softmax_out"],
    extra_cflags=["-O2"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.softmax_forward(x.contiguous())
