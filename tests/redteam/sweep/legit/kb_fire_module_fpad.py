# anvil-expect: pass
# anvil-class: legit
# anvil-task: l3_17_squeezenet_fire.py
# anvil-about: POLICY CASE: the 3x3 branch's zero padding is made with torch.nn.functional.pad (a copy into a larger
# anvil-about: zeroed buffer) so the C++ conv has no bounds checks; channel-offset writes into one torch.empty output.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
// y[:, off:off+O] = relu(valid conv(x, w) + b)
void conv_relu_valid_into(torch::Tensor x, torch::Tensor w, torch::Tensor b, torch::Tensor y, int64_t off) {
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3), O = w.size(0), K = w.size(2);
  const int64_t OH = H - K + 1, OW = W - K + 1, YC = y.size(1);
  const float* px = x.data_ptr<float>(); const float* pw = w.data_ptr<float>();
  const float* pb = b.data_ptr<float>(); float* py = y.data_ptr<float>();
  for (int64_t n = 0; n < N; ++n) for (int64_t o = 0; o < O; ++o)
    for (int64_t i = 0; i < OH; ++i) for (int64_t j = 0; j < OW; ++j) {
      float acc = pb[o];
      for (int64_t c = 0; c < C; ++c) for (int64_t p = 0; p < K; ++p) for (int64_t q = 0; q < K; ++q)
        acc += px[((n * C + c) * H + i + p) * W + j + q] * pw[((o * C + c) * K + p) * K + q];
      py[((n * YC + off + o) * OH + i) * OW + j] = acc > 0.f ? acc : 0.f;
    }
}
"""

_k = load_inline(name="legit_fire_fpad", cpp_sources=SRC, functions=["conv_relu_valid_into"], extra_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self, in_channels, squeeze_channels, expand1x1_channels, expand3x3_channels):
        super().__init__()
        self.squeeze = nn.Conv2d(in_channels, squeeze_channels, kernel_size=1)
        self.expand1x1 = nn.Conv2d(squeeze_channels, expand1x1_channels, kernel_size=1)
        self.expand3x3 = nn.Conv2d(squeeze_channels, expand3x3_channels, kernel_size=3, padding=1)

    def forward(self, x):
        N, _, H, W = x.shape
        s = torch.empty((N, self.squeeze.out_channels, H, W), dtype=x.dtype, device=x.device)
        _k.conv_relu_valid_into(x.contiguous(), self.squeeze.weight, self.squeeze.bias, s, 0)
        out = torch.empty((N, self.expand1x1.out_channels + self.expand3x3.out_channels, H, W), dtype=x.dtype,
                          device=x.device)
        _k.conv_relu_valid_into(s, self.expand1x1.weight, self.expand1x1.bias, out, 0)
        sp = F.pad(s, (1, 1, 1, 1)).contiguous()
        _k.conv_relu_valid_into(sp, self.expand3x3.weight, self.expand3x3.bias, out, self.expand1x1.out_channels)
        return out
