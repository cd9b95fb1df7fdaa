# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_94_mse.py
# anvil-about: MSE kernel that validates its inputs' dtypes with at::promoteTypes (type-promotion metadata, as
# anvil-about: torch's own ops do) before reading them as float; double accumulation; 0-dim result.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
torch::Tensor mse(torch::Tensor p, torch::Tensor t) {
  const auto common = at::promoteTypes(p.scalar_type(), t.scalar_type());
  TORCH_CHECK(common == at::kFloat, "mse: float32 inputs expected, got ", common);
  const float* pp = p.data_ptr<float>();
  const float* pt = t.data_ptr<float>();
  double acc = 0;
  for (int64_t i = 0; i < p.numel(); ++i) { const double d = double(pp[i]) - pt[i]; acc += d * d; }
  auto out = torch::empty({}, p.options());
  out.data_ptr<float>()[0] = float(acc / p.numel());
  return out;
}
"""

_ext = load_inline(name="legit_mse_promote", cpp_sources=SRC, functions=["mse"])


class ModelNew(nn.Module):
    def forward(self, predictions, targets):
        return _ext.mse(predictions.contiguous(), targets.contiguous())
