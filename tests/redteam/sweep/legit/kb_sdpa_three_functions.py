# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_97_sdpa.py
# anvil-about: attention as three functions of ONE extension (scores = QK^T*scale, an own `softmax` in place,
# anvil-about: out = P V) called in turn from Python, intermediate torch.empty buffer; view to [B*H, S, D].
import math

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
#include <cmath>

void scores(torch::Tensor q, torch::Tensor k, torch::Tensor s, double scale) {
  const int64_t BH = q.size(0), S = q.size(1), D = q.size(2);
  const float* pq = q.data_ptr<float>();
  const float* pk = k.data_ptr<float>();
  float* ps = s.data_ptr<float>();
  for (int64_t h = 0; h < BH; ++h)
    for (int64_t i = 0; i < S; ++i)
      for (int64_t j = 0; j < S; ++j) {
        float acc = 0.f;
        for (int64_t d = 0; d < D; ++d) acc += pq[(h * S + i) * D + d] * pk[(h * S + j) * D + d];
        ps[(h * S + i) * S + j] = acc * static_cast<float>(scale);
      }
}

void softmax(torch::Tensor s) {
  const int64_t L = s.size(-1), R = s.numel() / L;
  float* p = s.data_ptr<float>();
  for (int64_t r = 0; r < R; ++r) {
    float* row = p + r * L;
    float m = row[0];
    for (int64_t j = 1; j < L; ++j) m = std::fmax(m, row[j]);
    float sum = 0.f;
    for (int64_t j = 0; j < L; ++j) { row[j] = std::exp(row[j] - m); sum += row[j]; }
    for (int64_t j = 0; j < L; ++j) row[j] /= sum;
  }
}

torch::Tensor apply_v(torch::Tensor p, torch::Tensor v) {
  const int64_t BH = v.size(0), S = v.size(1), D = v.size(2);
  auto out = torch::zeros({BH, S, D}, v.options());
  const float* pp = p.data_ptr<float>();
  const float* pv = v.data_ptr<float>();
  float* po = out.data_ptr<float>();
  for (int64_t h = 0; h < BH; ++h)
    for (int64_t i = 0; i < S; ++i)
      for (int64_t j = 0; j < S; ++j) {
        const float w = pp[(h * S + i) * S + j];
        for (int64_t d = 0; d < D; ++d) po[(h * S + i) * D + d] += w * pv[(h * S + j) * D + d];
      }
  return out;
}
"""

attn = load_inline(name="legit_sdpa_three_fns", cpp_sources=SRC, functions=["scores", "softmax", "apply_v"],
                   extra_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, Q, K, V):
        B, H, S, D = Q.shape
        q = Q.reshape(B * H, S, D).contiguous()
        k = K.reshape(B * H, S, D).contiguous()
        v = V.reshape(B * H, S, D).contiguous()
        s = torch.empty((B * H, S, S), dtype=Q.dtype, device=Q.device)
        attn.scores(q, k, s, 1.0 / math.sqrt(D))
        attn.softmax(s)
        out = attn.apply_v(s, v)
        return out.view(B, H, S, D)
