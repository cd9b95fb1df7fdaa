# anvil-expect: compile_error
# anvil-about: the C++ source assigns a float* to an int64_t* (a type error), so the extension does not build
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SOURCE = r"""
#include <torch/extension.h>

#include <cstdint>

torch::Tensor relu_forward(torch::Tensor x) {
  auto out = torch::empty_like(x);
  const float* src = x.data_ptr<float>();
  int64_t* dst = out.data_ptr<float>();
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) dst[i] = src[i] > 0.0f ? src[i] : 0.0f;
  return out;
}
"""

_ext = load_inline(
    name="anvil_example_relu_compile_error",
    cpp_sources=_SOURCE,
    functions=["relu_forward"],
    extra_cflags=["-O2"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.relu_forward(x.contiguous())
