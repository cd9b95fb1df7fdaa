# anvil-expect: pass
# anvil-class: legit
# anvil-task: l2_76_gemm_add_relu.py
# anvil-about: at import the module asks its own extension for its compile-time block size (an int-returning
# anvil-about: function) and checks it once, a common sanity step; forward then uses the extension as usual.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
constexpr int64_t kBlock = 16;
int64_t block_size() { return kBlock; }
torch::Tensor gemm_bias_relu(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
  const int64_t B = x.size(0), I = x.size(1), O = w.size(0);
  auto y = torch::empty({B, O}, x.options());
  const float* px = x.data_ptr<float>();
  const float* pw = w.data_ptr<float>();
  const float* pb = b.data_ptr<float>();
  float* py = y.data_ptr<float>();
  for (int64_t o0 = 0; o0 < O; o0 += kBlock)
    for (int64_t r = 0; r < B; ++r)
      for (int64_t o = o0; o < std::min(O, o0 + kBlock); ++o) {
        float acc = pb[o];
        for (int64_t i = 0; i < I; ++i) acc += px[r * I + i] * pw[o * I + i];
        py[r * O + o] = acc > 0.f ? acc : 0.f;
      }
  return y;
}
"""

_ext = load_inline(name="legit_import_selftest", cpp_sources=SRC, functions=["block_size", "gemm_bias_relu"],
                   extra_cflags=["-O3"])
BLOCK = _ext.block_size()
assert BLOCK > 0 and BLOCK & (BLOCK - 1) == 0, "block size must be a power of two"


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        return _ext.gemm_bias_relu(x.contiguous(), self.gemm.weight, self.bias)
