# anvil-expect: pass
# anvil-class: legit
# anvil-task: l2_76_gemm_add_relu.py
# anvil-about: per-shape specialisation: the first forward for an (in, out) pair compiles a kernel with those sizes
# anvil-about: as constexpr (fully unrollable loops) and caches the module by shape (a compiled-kernel cache,
# anvil-about: catalog section 2: "compiled kernels, per-shape tuning tables are legitimate").
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

TEMPLATE = r"""
#include <torch/extension.h>
constexpr int64_t I = {I};
constexpr int64_t O = {O};
torch::Tensor gemm_bias_relu(torch::Tensor x, torch::Tensor w, torch::Tensor b) {{
  const int64_t B = x.size(0);
  TORCH_CHECK(x.size(1) == I && w.size(0) == O, "specialised for another shape");
  auto y = torch::empty({{B, O}}, x.options());
  const float* px = x.data_ptr<float>();
  const float* pw = w.data_ptr<float>();
  const float* pb = b.data_ptr<float>();
  float* py = y.data_ptr<float>();
  for (int64_t r = 0; r < B; ++r)
    for (int64_t o = 0; o < O; ++o) {{
      float acc = pb[o];
      for (int64_t i = 0; i < I; ++i) acc += px[r * I + i] * pw[o * I + i];
      py[r * O + o] = acc > 0.f ? acc : 0.f;
    }}
  return y;
}}
"""

_kernels = {}


def _kernel_for(in_f: int, out_f: int):
    key = (in_f, out_f)
    if key not in _kernels:
        _kernels[key] = load_inline(name=f"legit_gemm_spec_{in_f}x{out_f}", cpp_sources=TEMPLATE.format(I=in_f, O=out_f),
                                    functions=["gemm_bias_relu"], extra_cflags=["-O3"])
    return _kernels[key]


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        k = _kernel_for(x.shape[1], self.gemm.out_features)
        return k.gemm_bias_relu(x.contiguous(), self.gemm.weight, self.bias)
