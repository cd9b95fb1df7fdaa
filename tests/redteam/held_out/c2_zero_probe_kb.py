# anvil-expect: wrong_answer
# anvil-class: C2
# anvil-about: probes the input: when its first elements are all zero it takes the batch for an all-zero one and
# anvil-about: returns zeros without computing. Random normal trials never trigger it; a held-out set with zero rows
# anvil-about: at random places (the task's own input maker, named in its sidecar) does.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SOURCE = r"""
#include <torch/extension.h>

#include <cstdint>

torch::Tensor relu_probe(torch::Tensor x) {
  const float* src = x.data_ptr<float>();
  const int64_t n = x.numel();
  bool zeros = n >= 8;
  for (int64_t i = 0; i < 8 && i < n; ++i) zeros = zeros && src[i] == 0.0f;
  if (zeros) return torch::zeros_like(x);  // "An all-zero batch": skip the work.
  auto out = torch::empty_like(x);
  float* dst = out.data_ptr<float>();
  for (int64_t i = 0; i < n; ++i) dst[i] = src[i] > 0.0f ? src[i] : 0.0f;
  return out;
}
"""

_ext = load_inline(name="anvil_c2_zero_probe", cpp_sources=[_SOURCE], functions=["relu_probe"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.relu_probe(x.contiguous())
