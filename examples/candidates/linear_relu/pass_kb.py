# anvil-expect: pass
# anvil-about: fused x @ W^T + b then ReLU in one C++ loop nest; keeps nn.Linear only to own the parameters
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SOURCE = r"""
#include <torch/extension.h>

#include <cstdint>

// out[b, o] = max(0, sum_i x[b, i] * weight[o, i] + bias[o]); all contiguous float32 CPU tensors.
torch::Tensor linear_relu_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias) {
  for (const auto& t : {x, weight, bias}) {
    TORCH_CHECK(t.device().is_cpu(), "expected CPU tensors");
    TORCH_CHECK(t.scalar_type() == torch::kFloat32, "expected float32 tensors");
    TORCH_CHECK(t.is_contiguous(), "expected contiguous tensors");
  }
  TORCH_CHECK(x.dim() == 2 && weight.dim() == 2 && bias.dim() == 1, "expected x [B, I], W [O, I], b [O]");
  const int64_t batch = x.size(0), in_f = x.size(1), out_f = weight.size(0);
  TORCH_CHECK(weight.size(1) == in_f && bias.size(0) == out_f, "shape mismatch");
  auto out = torch::empty({batch, out_f}, x.options());
  const float* px = x.data_ptr<float>();
  const float* pw = weight.data_ptr<float>();
  const float* pb = bias.data_ptr<float>();
  float* po = out.data_ptr<float>();
  for (int64_t b = 0; b < batch; ++b) {
    const float* xr = px + b * in_f;
    for (int64_t o = 0; o < out_f; ++o) {
      const float* wr = pw + o * in_f;
      float acc = pb[o];
      for (int64_t i = 0; i < in_f; ++i) acc += xr[i] * wr[i];
      po[b * out_f + o] = acc > 0.0f ? acc : 0.0f;
    }
  }
  return out;
}
"""

_ext = load_inline(
    name="anvil_example_linear_relu",
    cpp_sources=_SOURCE,
    functions=["linear_relu_forward"],
    extra_cflags=["-O2"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        # Same attribute name and creation order as Model, so the same seed (or state_dict) gives the same
        # weights. Only the parameters are used; the computation is the kernel's.
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.linear_relu_forward(x.contiguous(), self.linear.weight, self.linear.bias)
