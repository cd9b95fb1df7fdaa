# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_42_maxpool2d.py
# anvil-about: the extension built by a @functools.lru_cache builder called from __init__ (so several ModelNew
# anvil-about: instances share one build); kernel size as a template parameter picked by a switch.
import functools

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
#include <algorithm>
#include <limits>

template <int K>
static void pool(const float* x, float* y, int64_t P, int64_t H, int64_t W, int64_t OH, int64_t OW, int64_t s,
                 int64_t p, int64_t d) {
  for (int64_t pl = 0; pl < P; ++pl)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        float m = -std::numeric_limits<float>::infinity();
        for (int i = 0; i < K; ++i) {
          const int64_t ih = oh * s - p + i * d;
          if (ih < 0 || ih >= H) continue;
          for (int j = 0; j < K; ++j) {
            const int64_t iw = ow * s - p + j * d;
            if (iw >= 0 && iw < W) m = std::max(m, x[(pl * H + ih) * W + iw]);
          }
        }
        y[(pl * OH + oh) * OW + ow] = m;
      }
}

torch::Tensor maxpool(torch::Tensor x, int64_t k, int64_t s, int64_t p, int64_t d) {
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  const int64_t OH = (H + 2 * p - d * (k - 1) - 1) / s + 1, OW = (W + 2 * p - d * (k - 1) - 1) / s + 1;
  auto y = torch::empty({N, C, OH, OW}, x.options());
  switch (k) {
    case 2: pool<2>(x.data_ptr<float>(), y.data_ptr<float>(), N * C, H, W, OH, OW, s, p, d); break;
    case 3: pool<3>(x.data_ptr<float>(), y.data_ptr<float>(), N * C, H, W, OH, OW, s, p, d); break;
    case 4: pool<4>(x.data_ptr<float>(), y.data_ptr<float>(), N * C, H, W, OH, OW, s, p, d); break;
    default: TORCH_CHECK(false, "unsupported kernel size ", k);
  }
  return y;
}
"""


@functools.lru_cache(maxsize=None)
def _build():
    return load_inline(name="legit_maxpool_lru", cpp_sources=SRC, functions=["maxpool"], extra_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self, kernel_size: int, stride: int, padding: int, dilation: int):
        super().__init__()
        self.ext = _build()
        self.cfg = (kernel_size, stride, padding, dilation)

    def forward(self, x):
        k, s, p, d = self.cfg
        return self.ext.maxpool(x.contiguous(), k, s, p, d)
