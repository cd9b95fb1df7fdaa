# anvil-expect: pass
# anvil-class: legit
# anvil-task: l3_3_deepnarrowmlp.py
# anvil-about: MLP with an nn.ModuleList of its own nn.Module subclass (`FusedLinear`, holding an nn.Linear), so
# anvil-about: parameter names differ from the reference's network.N.*; created in the reference's order.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
torch::Tensor linear_act(torch::Tensor x, torch::Tensor w, torch::Tensor b, bool relu) {
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
      py[r * O + o] = (relu && acc < 0.f) ? 0.f : acc;
    }
  return y;
}
"""

_ops = load_inline(name="legit_mlp_modulelist", cpp_sources=SRC, functions=["linear_act"], extra_cflags=["-O2"])


class FusedLinear(nn.Module):
    """nn.Linear's parameters with an optional fused ReLU."""

    def __init__(self, in_f: int, out_f: int, relu: bool):
        super().__init__()
        self.fc = nn.Linear(in_f, out_f)
        self.relu = relu

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ops.linear_act(x, self.fc.weight, self.fc.bias, self.relu)


class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_layer_sizes, output_size):
        super().__init__()
        sizes = [input_size, *hidden_layer_sizes, output_size]
        self.layers = nn.ModuleList(
            FusedLinear(sizes[i], sizes[i + 1], relu=i < len(sizes) - 2) for i in range(len(sizes) - 1))

    def forward(self, x):
        x = x.contiguous()
        for layer in self.layers:
            x = layer(x)
        return x
