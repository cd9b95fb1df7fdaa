# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_63_conv2d.py
# anvil-about: twin of kb_conv2d_unfold_im2col.py: the same im2col view built with x.as_strided(...) instead of
# anvil-about: two Tensor.unfold calls (the identical strided view), copied with .permute(...).contiguous().
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>

// y[o, p] = sum_k w[o, k] * cols[p, k]
torch::Tensor gemm_nt(torch::Tensor w, torch::Tensor cols) {
  const int64_t O = w.size(0), K = w.size(1), P = cols.size(0);
  auto y = torch::empty({O, P}, w.options());
  const float* pw = w.data_ptr<float>();
  const float* pc = cols.data_ptr<float>();
  float* py = y.data_ptr<float>();
  for (int64_t o = 0; o < O; ++o)
    for (int64_t p = 0; p < P; ++p) {
      float acc = 0.f;
      for (int64_t k = 0; k < K; ++k) acc += pw[o * K + k] * pc[p * K + k];
      py[o * P + p] = acc;
    }
  return y;
}
"""

_g = load_inline(name="legit_conv_asstrided_gemm", cpp_sources=SRC, functions=["gemm_nt"], extra_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=False):
        super().__init__()
        self.conv2d = nn.Conv2d(in_channels, out_channels, (kernel_size, kernel_size), bias=bias)
        self.k = kernel_size

    def forward(self, x):
        N, C, H, W = x.shape
        k = self.k
        OH, OW = H - k + 1, W - k + 1
        sN, sC, sH, sW = x.stride()
        patches = x.as_strided((N, C, OH, OW, k, k), (sN, sC, sH, sW, sH, sW))  # == x.unfold(2,k,1).unfold(3,k,1)
        cols = patches.permute(0, 2, 3, 1, 4, 5).contiguous().view(N * OH * OW, C * k * k)
        w = self.conv2d.weight.view(self.conv2d.out_channels, -1)
        y = _g.gemm_nt(w, cols)                               # [O, N*OH*OW]
        return y.view(-1, N, OH, OW).permute(1, 0, 2, 3).contiguous()
