# anvil-expect: pass
# anvil-class: legit
# anvil-task: l2_76_gemm_add_relu.py
# anvil-about: forward hands the kernel self.gemm.weight.T.contiguous() ([in, out], a transpose copy: plumbing) for
# anvil-about: an i-k-j GEMM with unit-stride inner loop; bias + ReLU fused; the `bias` Parameter made like the
# anvil-about: reference's (torch.randn in __init__).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
torch::Tensor gemm_nn_bias_relu(torch::Tensor x, torch::Tensor wt, torch::Tensor b) {
  const int64_t B = x.size(0), I = x.size(1), O = wt.size(1);
  auto y = torch::zeros({B, O}, x.options());
  const float* px = x.data_ptr<float>(); const float* pw = wt.data_ptr<float>();
  const float* pb = b.data_ptr<float>(); float* py = y.data_ptr<float>();
  for (int64_t r = 0; r < B; ++r) {
    float* yr = py + r * O;
    for (int64_t i = 0; i < I; ++i) {
      const float xv = px[r * I + i];
      const float* wr = pw + i * O;
      for (int64_t o = 0; o < O; ++o) yr[o] += xv * wr[o];
    }
    for (int64_t o = 0; o < O; ++o) { const float v = yr[o] + pb[o]; yr[o] = v > 0.f ? v : 0.f; }
  }
  return y;
}
"""

_ext = load_inline(name="legit_gemm_weight_T", cpp_sources=SRC, functions=["gemm_nn_bias_relu"], extra_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        return _ext.gemm_nn_bias_relu(x.contiguous(), self.gemm.weight.T.contiguous(), self.bias)
