# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_63_conv2d.py
# anvil-about: weight pre-packed ONCE in __init__ into a registered buffer laid out [KH, KW, C, O] (a cache of the
# anvil-about: weights, not of outputs) for a vectorisable inner loop; nn.Conv2d kept for the reference's weight.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
#include <vector>

// x [N, C, H, W], wp [KH, KW, C, O] -> y [N, O, OH, OW], stride 1, no padding.
torch::Tensor conv_packed(torch::Tensor x, torch::Tensor wp) {
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  const int64_t KH = wp.size(0), KW = wp.size(1), O = wp.size(3);
  const int64_t OH = H - KH + 1, OW = W - KW + 1;
  auto y = torch::empty({N, O, OH, OW}, x.options());
  const float* px = x.data_ptr<float>();
  const float* pw = wp.data_ptr<float>();
  float* py = y.data_ptr<float>();
  std::vector<float> acc(O);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        std::fill(acc.begin(), acc.end(), 0.f);
        for (int64_t kh = 0; kh < KH; ++kh)
          for (int64_t kw = 0; kw < KW; ++kw)
            for (int64_t c = 0; c < C; ++c) {
              const float v = px[((n * C + c) * H + oh + kh) * W + ow + kw];
              const float* wr = pw + ((kh * KW + kw) * C + c) * O;
              for (int64_t o = 0; o < O; ++o) acc[o] += v * wr[o];
            }
        for (int64_t o = 0; o < O; ++o) py[((n * O + o) * OH + oh) * OW + ow] = acc[o];
      }
  return y;
}
"""

_conv = load_inline(name="legit_conv_packed_buf", cpp_sources=SRC, functions=["conv_packed"], extra_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=False):
        super().__init__()
        self.conv2d = nn.Conv2d(in_channels, out_channels, (kernel_size, kernel_size), bias=bias)
        with torch.no_grad():
            packed = self.conv2d.weight.permute(2, 3, 1, 0).contiguous()
        self.register_buffer("w_packed", packed)

    def forward(self, x):
        return _conv.conv_packed(x.contiguous(), self.w_packed)
