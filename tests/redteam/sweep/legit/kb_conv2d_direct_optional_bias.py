# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_63_conv2d.py
# anvil-about: direct conv2d; ModelNew keeps nn.Conv2d (`conv2d`, bias=False) for its weight and hands
# anvil-about: c10::optional<torch::Tensor> bias (None here) to C++; stride/padding/dilation from the module;
# anvil-about: OpenMP collapse(2) over (n, oc).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>

torch::Tensor conv2d_direct(torch::Tensor x, torch::Tensor w, c10::optional<torch::Tensor> bias,
                            int64_t stride, int64_t pad, int64_t dil) {
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  const int64_t O = w.size(0), KH = w.size(2), KW = w.size(3);
  const int64_t OH = (H + 2 * pad - dil * (KH - 1) - 1) / stride + 1;
  const int64_t OW = (W + 2 * pad - dil * (KW - 1) - 1) / stride + 1;
  auto y = torch::empty({N, O, OH, OW}, x.options());
  const float* px = x.data_ptr<float>();
  const float* pw = w.data_ptr<float>();
  const float* pb = bias.has_value() && bias->defined() ? bias->data_ptr<float>() : nullptr;
  float* py = y.data_ptr<float>();
  #pragma omp parallel for collapse(2)
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t o = 0; o < O; ++o) {
      for (int64_t oh = 0; oh < OH; ++oh) {
        for (int64_t ow = 0; ow < OW; ++ow) {
          float acc = pb ? pb[o] : 0.f;
          for (int64_t c = 0; c < C; ++c)
            for (int64_t kh = 0; kh < KH; ++kh) {
              const int64_t ih = oh * stride - pad + kh * dil;
              if (ih < 0 || ih >= H) continue;
              for (int64_t kw = 0; kw < KW; ++kw) {
                const int64_t iw = ow * stride - pad + kw * dil;
                if (iw < 0 || iw >= W) continue;
                acc += px[((n * C + c) * H + ih) * W + iw] * pw[((o * C + c) * KH + kh) * KW + kw];
              }
            }
          py[((n * O + o) * OH + oh) * OW + ow] = acc;
        }
      }
    }
  }
  return y;
}
"""

conv_ext = load_inline(name="legit_conv2d_direct", cpp_sources=SRC, functions=["conv2d_direct"],
                       extra_cflags=["-O3", "-fopenmp"], extra_ldflags=["-fopenmp"])


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1, padding: int = 0,
                 dilation: int = 1, groups: int = 1, bias: bool = False):
        super().__init__()
        assert groups == 1
        self.conv2d = nn.Conv2d(in_channels, out_channels, (kernel_size, kernel_size), stride=stride,
                                padding=padding, dilation=dilation, groups=groups, bias=bias)

    def forward(self, x):
        c = self.conv2d
        return conv_ext.conv2d_direct(x.contiguous(), c.weight, c.bias, c.stride[0], c.padding[0], c.dilation[0])
