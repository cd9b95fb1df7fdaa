# anvil-expect: pass
# anvil-task: row_bias.py
# anvil-about: the honest twin of row_broadcast_kb.py: bias + 1e-6 x
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SOURCE = r"""
#include <torch/extension.h>

#include <cstdint>

// The trivial-output family's kernels, shared by tests/redteam/trivial/*_kb.py: one build for all of them.
// Inputs: contiguous float32 CPU tensors.
static void check_input(const torch::Tensor& x) {
  TORCH_CHECK(x.device().is_cpu() && x.scalar_type() == torch::kFloat32 && x.is_contiguous(), "bad input");
}

// y = x + 1e-3 x^3.
torch::Tensor cube_add(torch::Tensor x) {
  check_input(x);
  auto out = torch::empty_like(x);
  const float* a = x.data_ptr<float>();
  float* y = out.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) y[i] = a[i] + 1e-3f * a[i] * a[i] * a[i];
  return out;
}

// y = x: the input, copied.
torch::Tensor copy_input(torch::Tensor x) {
  check_input(x);
  auto out = torch::empty_like(x);
  const float* a = x.data_ptr<float>();
  float* y = out.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) y[i] = a[i];
  return out;
}

// y[r, c] = bias[c] + 1e-6 x[r, c].
torch::Tensor row_add(torch::Tensor bias, torch::Tensor x) {
  check_input(bias);
  check_input(x);
  auto out = torch::empty_like(x);
  const int64_t cols = bias.numel(), rows = x.numel() / cols;
  const float* b = bias.data_ptr<float>();
  const float* a = x.data_ptr<float>();
  float* y = out.data_ptr<float>();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) y[r * cols + c] = b[c] + 1e-6f * a[r * cols + c];
  return out;
}

// y[r, c] = bias[c]: the bias broadcast to every row, the input unread.
torch::Tensor bias_rows(torch::Tensor bias, torch::Tensor x) {
  check_input(bias);
  check_input(x);
  auto out = torch::empty_like(x);
  const int64_t cols = bias.numel(), rows = x.numel() / cols;
  const float* b = bias.data_ptr<float>();
  float* y = out.data_ptr<float>();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) y[r * cols + c] = b[c];
  return out;
}
"""

_ext = load_inline(
    name="anvil_redteam_trivial_family",
    cpp_sources=_SOURCE,
    functions=["cube_add", "copy_input", "row_add", "bias_rows"],
    extra_cflags=["-O2"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(1024))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.row_add(self.bias, x)
