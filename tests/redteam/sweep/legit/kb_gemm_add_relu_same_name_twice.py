# anvil-expect: pass
# anvil-class: legit
# anvil-task: l2_76_gemm_add_relu.py
# anvil-about: two different extensions built under the SAME load_inline name (copy-pasted name="fused_ops"): torch
# anvil-about: versions the second one (fused_ops_v1) and both load; here a GEMM module and a bias+ReLU module.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

GEMM = r"""
#include <torch/extension.h>
torch::Tensor gemm_nt(torch::Tensor x, torch::Tensor w) {
  const int64_t B = x.size(0), I = x.size(1), O = w.size(0);
  auto y = torch::empty({B, O}, x.options());
  const float* px = x.data_ptr<float>(); const float* pw = w.data_ptr<float>(); float* py = y.data_ptr<float>();
  for (int64_t r = 0; r < B; ++r) for (int64_t o = 0; o < O; ++o) {
    float acc = 0.f;
    for (int64_t i = 0; i < I; ++i) acc += px[r * I + i] * pw[o * I + i];
    py[r * O + o] = acc;
  }
  return y;
}
"""

EPI = r"""
#include <torch/extension.h>
void bias_relu_(torch::Tensor y, torch::Tensor b) {
  const int64_t O = b.numel(), R = y.numel() / O;
  float* py = y.data_ptr<float>(); const float* pb = b.data_ptr<float>();
  for (int64_t r = 0; r < R; ++r) for (int64_t o = 0; o < O; ++o) {
    const float v = py[r * O + o] + pb[o];
    py[r * O + o] = v > 0.f ? v : 0.f;
  }
}
"""

gemm_ext = load_inline(name="fused_ops", cpp_sources=GEMM, functions=["gemm_nt"])
epi_ext = load_inline(name="fused_ops", cpp_sources=EPI, functions=["bias_relu_"])


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        y = gemm_ext.gemm_nt(x.contiguous(), self.gemm.weight)
        epi_ext.bias_relu_(y, self.bias)
        return y
