# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_100_hinge.py
# anvil-about: hinge loss with at::parallel_reduce (double partial sums, combined with std::plus), targets
# anvil-about: broadcast along columns inside the kernel (targets[j] for column j, as the reference broadcasts).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <algorithm>
#include <functional>

torch::Tensor hinge(torch::Tensor pred, torch::Tensor tgt) {
  const int64_t R = pred.size(0), C = pred.size(1);
  TORCH_CHECK(tgt.numel() == C, "targets broadcast over the last dimension");
  const float* p = pred.data_ptr<float>();
  const float* t = tgt.data_ptr<float>();
  const double total = at::parallel_reduce(0, R * C, 1024, 0.0,
    [&](int64_t b, int64_t e, double acc) {
      for (int64_t i = b; i < e; ++i) acc += std::max(0.0f, 1.0f - p[i] * t[i % C]);
      return acc;
    }, std::plus<double>());
  auto out = torch::empty({}, pred.options());
  out.data_ptr<float>()[0] = static_cast<float>(total / (R * C));
  return out;
}
"""

_ext = load_inline(name="legit_hinge_preduce", cpp_sources=SRC, functions=["hinge"], extra_cflags=["-O2"])


class ModelNew(nn.Module):
    def forward(self, predictions, targets):
        return _ext.hinge(predictions.contiguous(), targets.contiguous())
