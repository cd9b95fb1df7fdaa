# anvil-expect: pass
# anvil-class: legit
# anvil-task: l3_17_squeezenet_fire.py
# anvil-about: SqueezeNet Fire block: squeeze 1x1+ReLU, then expand1x1 and expand3x3 (+ReLU) written straight into
# anvil-about: their channel ranges of ONE output (no torch.cat needed); own ConvReLU nn.Module subclasses hold the
# anvil-about: nn.Conv2d weights (names differ from the reference's).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>

// y[:, co_off + o] = relu(conv(x, w, b)) with padding pad, stride 1.
static void conv_relu_into(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b,
                           torch::Tensor& y, int64_t co_off, int64_t pad) {
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  const int64_t O = w.size(0), K = w.size(2), YC = y.size(1);
  const float* px = x.data_ptr<float>();
  const float* pw = w.data_ptr<float>();
  const float* pb = b.data_ptr<float>();
  float* py = y.data_ptr<float>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t i = 0; i < H; ++i)
        for (int64_t j = 0; j < W; ++j) {
          float acc = pb[o];
          for (int64_t c = 0; c < C; ++c)
            for (int64_t p = 0; p < K; ++p) {
              const int64_t ii = i + p - pad;
              if (ii < 0 || ii >= H) continue;
              for (int64_t q = 0; q < K; ++q) {
                const int64_t jj = j + q - pad;
                if (jj < 0 || jj >= W) continue;
                acc += px[((n * C + c) * H + ii) * W + jj] * pw[((o * C + c) * K + p) * K + q];
              }
            }
          py[((n * YC + co_off + o) * H + i) * W + j] = acc > 0.f ? acc : 0.f;
        }
}

torch::Tensor fire_forward(torch::Tensor x, torch::Tensor sw, torch::Tensor sb, torch::Tensor e1w,
                           torch::Tensor e1b, torch::Tensor e3w, torch::Tensor e3b) {
  const int64_t N = x.size(0), H = x.size(2), W = x.size(3);
  auto s = torch::empty({N, sw.size(0), H, W}, x.options());
  conv_relu_into(x, sw, sb, s, 0, 0);
  auto y = torch::empty({N, e1w.size(0) + e3w.size(0), H, W}, x.options());
  conv_relu_into(s, e1w, e1b, y, 0, 0);
  conv_relu_into(s, e3w, e3b, y, e1w.size(0), 1);
  return y;
}
"""

fire = load_inline(name="legit_fire_single_out", cpp_sources=SRC, functions=["fire_forward"], extra_cflags=["-O3"])


class ConvReLU(nn.Module):
    def __init__(self, cin, cout, k, padding=0):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, kernel_size=k, padding=padding)


class ModelNew(nn.Module):
    def __init__(self, in_channels, squeeze_channels, expand1x1_channels, expand3x3_channels):
        super().__init__()
        self.squeeze = ConvReLU(in_channels, squeeze_channels, 1)
        self.expand1x1 = ConvReLU(squeeze_channels, expand1x1_channels, 1)
        self.expand3x3 = ConvReLU(squeeze_channels, expand3x3_channels, 3, padding=1)

    def forward(self, x):
        s, e1, e3 = self.squeeze.conv, self.expand1x1.conv, self.expand3x3.conv
        return fire.fire_forward(x.contiguous(), s.weight, s.bias, e1.weight, e1.bias, e3.weight, e3.bias)
