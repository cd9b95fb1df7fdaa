# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_23_softmax_bf16.py
# anvil-about: bf16 softmax: AT_DISPATCH_FLOATING_TYPES_AND2(Half, BFloat16) with at::opmath_type<scalar_t>
# anvil-about: (fp32 accumulation of a bf16 task, as torch does), output in the input dtype (empty_like).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <cmath>
#include <limits>

template <typename scalar_t>
void softmax_kernel(const scalar_t* x, scalar_t* y, int64_t rows, int64_t cols) {
  using acc_t = at::opmath_type<scalar_t>;
  for (int64_t r = 0; r < rows; ++r) {
    const scalar_t* xr = x + r * cols;
    scalar_t* yr = y + r * cols;
    acc_t m = -std::numeric_limits<acc_t>::infinity();
    for (int64_t c = 0; c < cols; ++c) m = std::max(m, static_cast<acc_t>(xr[c]));
    acc_t s = 0;
    for (int64_t c = 0; c < cols; ++c) s += std::exp(static_cast<acc_t>(xr[c]) - m);
    const acc_t inv = acc_t(1) / s;
    for (int64_t c = 0; c < cols; ++c) yr[c] = static_cast<scalar_t>(std::exp(static_cast<acc_t>(xr[c]) - m) * inv);
  }
}

torch::Tensor softmax_lastdim(torch::Tensor x) {
  TORCH_CHECK(x.dim() == 2, "expected a 2-D tensor");
  auto xc = x.contiguous();
  auto y = at::empty_like(xc);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::ScalarType::Half, at::ScalarType::BFloat16, xc.scalar_type(), "softmax_lastdim", [&] {
    softmax_kernel<scalar_t>(xc.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), xc.size(0), xc.size(1));
  });
  return y;
}
"""

ext = load_inline(name="legit_softmax_bf16_disp", cpp_sources=SRC, functions=["softmax_lastdim"],
                  extra_cflags=["-O2"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.softmax_lastdim(x)
