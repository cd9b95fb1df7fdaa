# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_42_maxpool2d.py
# anvil-about: the kernel source is specialised in __init__ from the constructor's arguments (kernel/stride/padding/
# anvil-about: dilation baked in as constexpr via str.format) and built there, one extension name per config.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

TEMPLATE = r"""
#include <torch/extension.h>
#include <algorithm>
#include <limits>
constexpr int64_t K = {k}, S = {s}, P = {p}, D = {d};
torch::Tensor pool(torch::Tensor x) {{
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  const int64_t OH = (H + 2 * P - D * (K - 1) - 1) / S + 1, OW = (W + 2 * P - D * (K - 1) - 1) / S + 1;
  auto y = torch::empty({{N, C, OH, OW}}, x.options());
  const float* px = x.data_ptr<float>();
  float* py = y.data_ptr<float>();
  for (int64_t pl = 0; pl < N * C; ++pl)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {{
        float m = -std::numeric_limits<float>::infinity();
        for (int64_t i = 0; i < K; ++i)
          for (int64_t j = 0; j < K; ++j) {{
            const int64_t ih = oh * S - P + i * D, iw = ow * S - P + j * D;
            if (ih >= 0 && ih < H && iw >= 0 && iw < W) m = std::max(m, px[(pl * H + ih) * W + iw]);
          }}
        py[(pl * OH + oh) * OW + ow] = m;
      }}
  return y;
}}
"""


class ModelNew(nn.Module):
    def __init__(self, kernel_size: int, stride: int, padding: int, dilation: int):
        super().__init__()
        src = TEMPLATE.format(k=kernel_size, s=stride, p=padding, d=dilation)
        self.ext = load_inline(name=f"legit_pool_k{kernel_size}s{stride}p{padding}d{dilation}", cpp_sources=src,
                               functions=["pool"], extra_cflags=["-O3"])

    def forward(self, x):
        return self.ext.pool(x.contiguous())
