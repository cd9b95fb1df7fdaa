# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_83_depthwise.py
# anvil-about: depthwise (k x 1) conv2d: helpers in an anonymous namespace, `static constexpr` tap count check,
# anvil-about: stride/padding/dilation read from the held nn.Conv2d; groups = channels.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>

namespace {
inline int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d) {
  return (in + 2 * p - d * (k - 1) - 1) / s + 1;
}

void depthwise_kx1(const float* x, const float* w, float* y, int64_t N, int64_t C, int64_t H, int64_t W,
                   int64_t K, int64_t s, int64_t p, int64_t d, int64_t OH, int64_t OW) {
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          float acc = 0.f;
          const int64_t iw = ow * s - p;
          if (iw >= 0 && iw < W) {
            for (int64_t k = 0; k < K; ++k) {
              const int64_t ih = oh * s - p + k * d;
              if (ih >= 0 && ih < H) acc += x[((n * C + c) * H + ih) * W + iw] * w[c * K + k];
            }
          }
          y[((n * C + c) * OH + oh) * OW + ow] = acc;
        }
}
}  // namespace

torch::Tensor depthwise_forward(torch::Tensor x, torch::Tensor w, int64_t s, int64_t p, int64_t d) {
  TORCH_CHECK(w.size(1) == 1 && w.size(3) == 1, "expected a depthwise [C, 1, K, 1] weight");
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3), K = w.size(2);
  const int64_t OH = out_size(H, K, s, p, d), OW = out_size(W, 1, s, p, 1);
  auto y = torch::empty({N, C, OH, OW}, x.options());
  depthwise_kx1(x.data_ptr<float>(), w.data_ptr<float>(), y.data_ptr<float>(), N, C, H, W, K, s, p, d, OH, OW);
  return y;
}
"""

dw = load_inline(name="legit_depthwise_anon", cpp_sources=SRC, functions=["depthwise_forward"], extra_cflags=["-O2"])


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, kernel_size: int, stride: int = 1, padding: int = 0, dilation: int = 1,
                 bias: bool = False):
        super().__init__()
        self.conv2d = nn.Conv2d(in_channels, in_channels, kernel_size=(kernel_size, 1), stride=stride,
                                padding=padding, dilation=dilation, groups=in_channels, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        c = self.conv2d
        return dw.depthwise_forward(x.contiguous(), c.weight.contiguous(), c.stride[0], c.padding[0], c.dilation[0])
