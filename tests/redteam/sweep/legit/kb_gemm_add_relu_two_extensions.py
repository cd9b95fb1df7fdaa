# anvil-expect: pass
# anvil-class: legit
# anvil-task: l2_76_gemm_add_relu.py
# anvil-about: two load_inline extensions: a GEMM module (x W^T, no bias) and an epilogue module (+bias, ReLU in
# anvil-about: place); nn.Linear(bias=False) `gemm` and the reference's own `bias` Parameter kept by name.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

GEMM_SRC = r"""
#include <torch/extension.h>
torch::Tensor gemm_nt(torch::Tensor x, torch::Tensor w) {
  const int64_t B = x.size(0), I = x.size(1), O = w.size(0);
  auto y = torch::empty({B, O}, x.options());
  const float* px = x.data_ptr<float>();
  const float* pw = w.data_ptr<float>();
  float* py = y.data_ptr<float>();
  for (int64_t r = 0; r < B; ++r)
    for (int64_t o = 0; o < O; ++o) {
      float acc = 0.f;
      for (int64_t i = 0; i < I; ++i) acc += px[r * I + i] * pw[o * I + i];
      py[r * O + o] = acc;
    }
  return y;
}
"""

EPILOGUE_SRC = r"""
#include <torch/extension.h>
void bias_relu_(torch::Tensor y, torch::Tensor bias) {
  const int64_t O = bias.numel(), R = y.numel() / O;
  float* py = y.data_ptr<float>();
  const float* pb = bias.data_ptr<float>();
  for (int64_t r = 0; r < R; ++r)
    for (int64_t o = 0; o < O; ++o) {
      const float v = py[r * O + o] + pb[o];
      py[r * O + o] = v > 0.f ? v : 0.f;
    }
}
"""

gemm_mod = load_inline(name="legit_two_ext_gemm", cpp_sources=GEMM_SRC, functions=["gemm_nt"], extra_cflags=["-O3"])
epi_mod = load_inline(name="legit_two_ext_epilogue", cpp_sources=EPILOGUE_SRC, functions=["bias_relu_"],
                      extra_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        y = gemm_mod.gemm_nt(x.contiguous(), self.gemm.weight)
        epi_mod.bias_relu_(y, self.bias)
        return y
