# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_20_leakyrelu_fp16.py
# anvil-about: fp16 LeakyReLU in plain C++ on at::Half (converted to float per element), OpenMP; negative_slope
# anvil-about: from the constructor with its default; returns the input dtype.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>

torch::Tensor lrelu(torch::Tensor x, double negative_slope) {
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  const at::Half* px = xc.data_ptr<at::Half>();
  at::Half* py = y.data_ptr<at::Half>();
  const float s = static_cast<float>(negative_slope);
  const int64_t n = xc.numel();
  #pragma omp parallel for
  for (int64_t i = 0; i < n; ++i) {
    const float v = static_cast<float>(px[i]);
    py[i] = static_cast<at::Half>(v >= 0.f ? v : v * s);
  }
  return y;
}
"""

ext = load_inline(name="legit_lrelu_half_scalar", cpp_sources=SRC, functions=["lrelu"],
                  extra_cflags=["-O2", "-fopenmp"], extra_ldflags=["-fopenmp"])


class ModelNew(nn.Module):
    def __init__(self, negative_slope: float = 0.01):
        super(ModelNew, self).__init__()
        self.negative_slope = negative_slope

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dtype != torch.float16:
            raise TypeError(f"expected float16 input, got {x.dtype}")
        return ext.lrelu(x, self.negative_slope)
