# anvil-expect: pass
# anvil-class: legit
# anvil-task: l3_3_deepnarrowmlp.py
# anvil-about: level-3 MLP: ModelNew builds the same nn.Sequential (`network`) for its parameters and walks it,
# anvil-about: calling a fused Linear(+ReLU) kernel per nn.Linear (isinstance checks, next-module peek for ReLU).
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

mlp_ext = load_inline(name="legit_mlp_sequential", cpp_sources=SRC, functions=["linear_act"], extra_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_layer_sizes, output_size):
        super(ModelNew, self).__init__()
        layers = []
        current = input_size
        for h in hidden_layer_sizes:
            layers.append(nn.Linear(current, h))
            layers.append(nn.ReLU())
            current = h
        layers.append(nn.Linear(current, output_size))
        self.network = nn.Sequential(*layers)

    def forward(self, x):
        mods = list(self.network)
        x = x.contiguous()
        for i, m in enumerate(mods):
            if isinstance(m, nn.Linear):
                relu = i + 1 < len(mods) and isinstance(mods[i + 1], nn.ReLU)
                x = mlp_ext.linear_act(x, m.weight, m.bias, relu)
        return x
