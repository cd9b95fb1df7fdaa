# anvil-expect: pass
# anvil-class: legit
# anvil-task: l3_17_squeezenet_fire.py
# anvil-about: POLICY CASE: every conv+ReLU is the candidate's C++ kernel; the two expand branches are joined with
# anvil-about: torch.cat along channels exactly as the reference does (data movement only, like copy_/contiguous).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
torch::Tensor conv_relu(torch::Tensor x, torch::Tensor w, torch::Tensor b, int64_t pad) {
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3), O = w.size(0), K = w.size(2);
  auto y = torch::empty({N, O, H, W}, x.options());
  auto X = x.accessor<float, 4>(); auto Wt = w.accessor<float, 4>(); auto Y = y.accessor<float, 4>();
  const float* pb = b.data_ptr<float>();
  for (int64_t n = 0; n < N; ++n) for (int64_t o = 0; o < O; ++o)
    for (int64_t i = 0; i < H; ++i) for (int64_t j = 0; j < W; ++j) {
      float acc = pb[o];
      for (int64_t c = 0; c < C; ++c) for (int64_t p = 0; p < K; ++p) for (int64_t q = 0; q < K; ++q) {
        const int64_t ii = i + p - pad, jj = j + q - pad;
        if (ii >= 0 && ii < H && jj >= 0 && jj < W) acc += X[n][c][ii][jj] * Wt[o][c][p][q];
      }
      Y[n][o][i][j] = acc > 0.f ? acc : 0.f;
    }
  return y;
}
"""

_k = load_inline(name="legit_fire_cat", cpp_sources=SRC, functions=["conv_relu"], extra_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self, in_channels, squeeze_channels, expand1x1_channels, expand3x3_channels):
        super().__init__()
        self.squeeze = nn.Conv2d(in_channels, squeeze_channels, kernel_size=1)
        self.expand1x1 = nn.Conv2d(squeeze_channels, expand1x1_channels, kernel_size=1)
        self.expand3x3 = nn.Conv2d(squeeze_channels, expand3x3_channels, kernel_size=3, padding=1)

    def forward(self, x):
        s = _k.conv_relu(x.contiguous(), self.squeeze.weight, self.squeeze.bias, 0)
        a = _k.conv_relu(s, self.expand1x1.weight, self.expand1x1.bias, 0)
        b = _k.conv_relu(s, self.expand3x3.weight, self.expand3x3.bias, 1)
        return torch.cat([a, b], dim=1)
