# anvil-expect: pass
# anvil-class: legit
# anvil-task: l2_76_gemm_add_relu.py
# anvil-about: lazy build on the first forward (as kb_gemm_add_relu_lazy_build.py), behind the usual guard that
# anvil-about: refuses non-CPU tensors (`if x.device.type != "cpu": raise`) before the kernel is fetched.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
torch::Tensor gemm_bias_relu(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
  const int64_t B = x.size(0), I = x.size(1), O = w.size(0);
  auto y = torch::empty({B, O}, x.options());
  const float* px = x.data_ptr<float>();
  const float* pw = w.data_ptr<float>();
  const float* pb = b.data_ptr<float>();
  float* py = y.data_ptr<float>();
  for (int64_t r = 0; r < B; ++r)
    for (int64_t o = 0; o < O; ++o) {
      float acc = pb[o];
      for (int64_t i = 0; i < I; ++i) acc += px[r * I + i] * pw[o * I + i];
      py[r * O + o] = acc > 0.f ? acc : 0.f;
    }
  return y;
}
"""

_EXT = None


def _get_ext():
    global _EXT
    if _EXT is None:
        _EXT = load_inline(name="legit_lazy_build_guarded", cpp_sources=SRC, functions=["gemm_bias_relu"],
                           extra_cflags=["-O3"])
    return _EXT


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        if x.device.type != "cpu":
            raise RuntimeError(f"this kernel runs on the CPU only, got {x.device}")
        return _get_ext().gemm_bias_relu(x.contiguous(), self.gemm.weight, self.bias)
