# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_63_conv2d.py
# anvil-about: NHWC kernel: forward converts with x.contiguous(memory_format=torch.channels_last) (a layout copy),
# anvil-about: weight pre-permuted to [O, KH, KW, C] in __init__ into a buffer; output produced NHWC then given
# anvil-about: back as an NCHW view with .permute(0, 3, 1, 2).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
// x: NCHW sizes with channels_last strides; w: [O, KH, KW, C]; returns y as [N, OH, OW, O] (contiguous).
torch::Tensor conv_nhwc(torch::Tensor x, torch::Tensor w) {
  TORCH_CHECK(x.is_contiguous(at::MemoryFormat::ChannelsLast), "channels_last input expected");
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  const int64_t O = w.size(0), KH = w.size(1), KW = w.size(2);
  const int64_t OH = H - KH + 1, OW = W - KW + 1;
  auto y = torch::empty({N, OH, OW, O}, x.options());
  const float* px = x.data_ptr<float>();   // memory order n, h, w, c
  const float* pw = w.data_ptr<float>();
  float* py = y.data_ptr<float>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t i = 0; i < OH; ++i)
      for (int64_t j = 0; j < OW; ++j)
        for (int64_t o = 0; o < O; ++o) {
          float acc = 0.f;
          for (int64_t p = 0; p < KH; ++p)
            for (int64_t q = 0; q < KW; ++q) {
              const float* xv = px + ((n * H + i + p) * W + j + q) * C;
              const float* wv = pw + ((o * KH + p) * KW + q) * C;
              for (int64_t c = 0; c < C; ++c) acc += xv[c] * wv[c];
            }
          py[((n * OH + i) * OW + j) * O + o] = acc;
        }
  return y;
}
"""

_ext = load_inline(name="legit_conv_nhwc", cpp_sources=SRC, functions=["conv_nhwc"], extra_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=False):
        super().__init__()
        self.conv2d = nn.Conv2d(in_channels, out_channels, (kernel_size, kernel_size), bias=bias)
        self.register_buffer("w_ohwc", self.conv2d.weight.detach().permute(0, 2, 3, 1).contiguous())

    def forward(self, x):
        y = _ext.conv_nhwc(x.contiguous(memory_format=torch.channels_last), self.w_ohwc)
        return y.permute(0, 3, 1, 2)
