# anvil-expect: pass
# anvil-class: legit
# anvil-task: l2_57_conv2d_relu_hardswish.py
# anvil-about: conv2d + ReLU + HardSwish fused in one C++ loop nest; `if x.is_cuda:` branch that refuses (no CUDA
# anvil-about: kernel shipped), nn.Conv2d `conv` kept for weight+bias, x * clamp((x+3)/6, 0, 1) written by hand.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
#include <algorithm>

static inline float hardswish_after_relu(float v) {
  v = std::max(v, 0.0f);
  return v * std::min(std::max((v + 3.0f) / 6.0f, 0.0f), 1.0f);
}

torch::Tensor conv_relu_hswish(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  const int64_t O = w.size(0), K = w.size(2);
  const int64_t OH = H - K + 1, OW = W - K + 1;
  auto y = torch::empty({N, O, OH, OW}, x.options());
  auto X = x.accessor<float, 4>();
  auto Wt = w.accessor<float, 4>();
  auto Bs = b.accessor<float, 1>();
  auto Y = y.accessor<float, 4>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t i = 0; i < OH; ++i)
        for (int64_t j = 0; j < OW; ++j) {
          float acc = Bs[o];
          for (int64_t c = 0; c < C; ++c)
            for (int64_t p = 0; p < K; ++p)
              for (int64_t q = 0; q < K; ++q) acc += X[n][c][i + p][j + q] * Wt[o][c][p][q];
          Y[n][o][i][j] = hardswish_after_relu(acc);
        }
  return y;
}
"""

fused = load_inline(name="legit_conv_relu_hswish", cpp_sources=SRC, functions=["conv_relu_hswish"],
                    extra_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super(ModelNew, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        if x.is_cuda:
            raise RuntimeError("CUDA path not implemented in this submission")
        return fused.conv_relu_hswish(x.contiguous(), self.conv.weight, self.conv.bias)
