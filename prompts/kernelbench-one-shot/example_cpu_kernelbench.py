import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = r"""
#include <torch/extension.h>

// relu(a + b) in one pass over contiguous float32 buffers.
torch::Tensor add_relu(torch::Tensor a, torch::Tensor b) {
  TORCH_CHECK(a.sizes() == b.sizes() && a.scalar_type() == torch::kFloat32 && b.scalar_type() == torch::kFloat32);
  a = a.contiguous();
  b = b.contiguous();
  auto out = torch::empty_like(a);
  const float* x = a.data_ptr<float>();
  const float* y = b.data_ptr<float>();
  float* z = out.data_ptr<float>();
  const int64_t n = a.numel();
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const float s = x[i] + y[i];
    z[i] = s > 0.0f ? s : 0.0f;
  }
  return out;
}
"""

add_relu = load_inline(
    name="add_relu_cpu",
    cpp_sources=source,
    functions=["add_relu"],
    extra_cflags=["-O3", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return add_relu.add_relu(a, b)
