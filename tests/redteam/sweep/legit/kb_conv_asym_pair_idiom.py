# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_56_conv_asym.py
# anvil-about: the usual "_pair" idiom on the constructor's kernel_size (the task passes the tuple (5, 7)):
# anvil-about: `k if isinstance(k, tuple) else (k, k)`; direct conv in C++ over (kh, kw) from that pair.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
torch::Tensor conv2d_valid(torch::Tensor x, torch::Tensor w, int64_t kh, int64_t kw) {
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3), O = w.size(0);
  TORCH_CHECK(w.size(2) == kh && w.size(3) == kw, "kernel size mismatch");
  const int64_t OH = H - kh + 1, OW = W - kw + 1;
  auto y = torch::empty({N, O, OH, OW}, x.options());
  const float* px = x.data_ptr<float>(); const float* pw = w.data_ptr<float>(); float* py = y.data_ptr<float>();
  for (int64_t n = 0; n < N; ++n) for (int64_t o = 0; o < O; ++o)
    for (int64_t i = 0; i < OH; ++i) for (int64_t j = 0; j < OW; ++j) {
      float acc = 0.f;
      for (int64_t c = 0; c < C; ++c) for (int64_t p = 0; p < kh; ++p) for (int64_t q = 0; q < kw; ++q)
        acc += px[((n * C + c) * H + i + p) * W + j + q] * pw[((o * C + c) * kh + p) * kw + q];
      py[((n * O + o) * OH + i) * OW + j] = acc;
    }
  return y;
}
"""

_ext = load_inline(name="legit_conv_asym_pair", cpp_sources=SRC, functions=["conv2d_valid"], extra_cflags=["-O3"])


def _pair(v):
    return v if isinstance(v, tuple) else (v, v)


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: tuple, stride: tuple = (1, 1),
                 padding: tuple = (0, 0), dilation: tuple = (1, 1), groups: int = 1, bias: bool = False):
        super().__init__()
        self.kh, self.kw = _pair(kernel_size)
        self.conv2d = nn.Conv2d(in_channels, out_channels, (self.kh, self.kw), stride=stride, padding=padding,
                                dilation=dilation, groups=groups, bias=bias)

    def forward(self, x):
        return _ext.conv2d_valid(x.contiguous(), self.conv2d.weight, self.kh, self.kw)
