# anvil-expect: runtime_error
# anvil-about: passes with_cuda=float("nan") to load_inline: the extraction's record of the call held a NaN, its
# anvil-about: JSON did not parse, and the candidate's own argument became anvil's infra_error (a neutral reward)
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SOURCE = r"""
#include <torch/extension.h>

torch::Tensor relu_forward(torch::Tensor x) {
  auto out = torch::empty_like(x);
  const float* src = x.data_ptr<float>();
  float* dst = out.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) dst[i] = src[i] > 0.0f ? src[i] : 0.0f;
  return out;
}
"""

_ext = load_inline(name="anvil_nan_with_cuda", cpp_sources=_SOURCE, functions=["relu_forward"],
                   with_cuda=float("nan"), verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return _ext.relu_forward(x.contiguous())
