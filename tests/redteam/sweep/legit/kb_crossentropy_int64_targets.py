# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_95_crossentropy.py
# anvil-about: cross entropy (mean over the batch) with int64 class targets read through data_ptr<int64_t>(),
# anvil-about: TORCH_CHECK on the target range, log-sum-exp per row with max subtraction; 0-dim result.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
#include <cmath>

torch::Tensor cross_entropy_mean(torch::Tensor logits, torch::Tensor targets) {
  TORCH_CHECK(targets.scalar_type() == torch::kInt64, "targets must be int64");
  const int64_t B = logits.size(0), C = logits.size(1);
  const float* x = logits.data_ptr<float>();
  const int64_t* t = targets.data_ptr<int64_t>();
  double total = 0;
  for (int64_t b = 0; b < B; ++b) {
    TORCH_CHECK(t[b] >= 0 && t[b] < C, "target out of range");
    const float* row = x + b * C;
    float m = row[0];
    for (int64_t c = 1; c < C; ++c) m = row[c] > m ? row[c] : m;
    double s = 0;
    for (int64_t c = 0; c < C; ++c) s += std::exp(double(row[c] - m));
    total += (m + std::log(s)) - row[t[b]];
  }
  auto out = torch::empty({}, logits.options());
  out.fill_(static_cast<float>(total / B));
  return out;
}
"""

ce = load_inline(name="legit_ce_int64", cpp_sources=SRC, functions=["cross_entropy_mean"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return ce.cross_entropy_mean(predictions.contiguous(), targets.contiguous())
