# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_94_mse.py
# anvil-about: MSE loss returning a 0-dim tensor (torch::empty({})) like torch.mean; OpenMP reduction(+:acc) in
# anvil-about: double; both inputs .contiguous() and checked with TORCH_CHECK(same sizes).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>

torch::Tensor mse_loss(torch::Tensor pred, torch::Tensor target) {
  TORCH_CHECK(pred.sizes() == target.sizes(), "mse_loss: shape mismatch");
  const int64_t n = pred.numel();
  const float* p = pred.data_ptr<float>();
  const float* t = target.data_ptr<float>();
  double acc = 0.0;
  #pragma omp parallel for reduction(+:acc)
  for (int64_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(p[i]) - t[i];
    acc += d * d;
  }
  auto out = torch::empty({}, pred.options());
  out.data_ptr<float>()[0] = static_cast<float>(acc / static_cast<double>(n));
  return out;
}
"""

loss_ext = load_inline(name="legit_mse_omp", cpp_sources=SRC, functions=["mse_loss"],
                       extra_cflags=["-O3", "-fopenmp"], extra_ldflags=["-fopenmp"])


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, predictions, targets):
        return loss_ext.mse_loss(predictions.contiguous(), targets.contiguous())
