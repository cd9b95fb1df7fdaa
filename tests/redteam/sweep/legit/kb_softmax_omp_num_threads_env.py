# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_23_softmax.py
# anvil-about: os.environ.setdefault("OMP_NUM_THREADS", ...) before building an OpenMP kernel (a thread-count default
# anvil-about: for this process only), then a parallel-for softmax.
import os

os.environ.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1))))

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
#include <cmath>
torch::Tensor softmax_omp(torch::Tensor x) {
  auto y = torch::empty_like(x);
  const int64_t R = x.size(0), C = x.size(1);
  const float* px = x.data_ptr<float>();
  float* py = y.data_ptr<float>();
  #pragma omp parallel for
  for (int64_t r = 0; r < R; ++r) {
    float m = px[r * C];
    for (int64_t c = 1; c < C; ++c) m = std::fmax(m, px[r * C + c]);
    float s = 0.f;
    for (int64_t c = 0; c < C; ++c) { py[r * C + c] = std::exp(px[r * C + c] - m); s += py[r * C + c]; }
    for (int64_t c = 0; c < C; ++c) py[r * C + c] /= s;
  }
  return y;
}
"""

ext = load_inline(name="legit_softmax_omp_env", cpp_sources=SRC, functions=["softmax_omp"],
                  extra_cflags=["-O3", "-fopenmp"], extra_ldflags=["-fopenmp"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.softmax_omp(x.contiguous())
