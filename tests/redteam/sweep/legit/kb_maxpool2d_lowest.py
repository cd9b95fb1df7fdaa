# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_42_maxpool2d.py
# anvil-about: MaxPool2d with padding (padded cells ignored, numeric_limits<float>::lowest()), kernel/stride/
# anvil-about: padding/dilation as int attributes from get_init_inputs; std::max; at::parallel_for over planes.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <algorithm>
#include <limits>

torch::Tensor maxpool2d(torch::Tensor x, int64_t k, int64_t s, int64_t p, int64_t d) {
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  const int64_t OH = (H + 2 * p - d * (k - 1) - 1) / s + 1;
  const int64_t OW = (W + 2 * p - d * (k - 1) - 1) / s + 1;
  auto y = torch::empty({N, C, OH, OW}, x.options());
  const float* px = x.data_ptr<float>();
  float* py = y.data_ptr<float>();
  at::parallel_for(0, N * C, 1, [&](int64_t b, int64_t e) {
    for (int64_t plane = b; plane < e; ++plane) {
      const float* xp = px + plane * H * W;
      float* yp = py + plane * OH * OW;
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          float m = std::numeric_limits<float>::lowest();
          for (int64_t i = 0; i < k; ++i) {
            const int64_t ih = oh * s - p + i * d;
            if (ih < 0 || ih >= H) continue;
            for (int64_t j = 0; j < k; ++j) {
              const int64_t iw = ow * s - p + j * d;
              if (iw < 0 || iw >= W) continue;
              m = std::max(m, xp[ih * W + iw]);
            }
          }
          yp[oh * OW + ow] = m;
        }
    }
  });
  return y;
}
"""

pool = load_inline(name="legit_maxpool2d_lowest", cpp_sources=SRC, functions=["maxpool2d"], extra_cflags=["-O2"])


class ModelNew(nn.Module):
    def __init__(self, kernel_size: int, stride: int, padding: int, dilation: int):
        super(ModelNew, self).__init__()
        self.kernel_size, self.stride, self.padding, self.dilation = kernel_size, stride, padding, dilation

    def forward(self, x):
        return pool.maxpool2d(x.contiguous(), self.kernel_size, self.stride, self.padding, self.dilation)
