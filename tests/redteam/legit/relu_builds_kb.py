# anvil-expect: pass
# anvil-class: legit
# anvil-about: three ways honest code builds its extensions that anvil once got wrong: one load_inline name for two
# anvil-about: sources (torch loads both, the second as name_v1), a self-test that calls the first at import (below ModelNew), and the
# anvil-about: second built on forward's first call behind a check of the input's device
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SCALE = r"""
#include <torch/extension.h>
// y = 1 * x: the module's own self-test at import calls it.
torch::Tensor identity(torch::Tensor x) { return x.clone(); }
"""
_RELU = r"""
#include <torch/extension.h>
torch::Tensor relu_forward(torch::Tensor x) {
  auto out = torch::empty_like(x);
  const float* src = x.data_ptr<float>();
  float* dst = out.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) dst[i] = src[i] > 0.0f ? src[i] : 0.0f;
  return out;
}
"""
_first = load_inline(name="legit_builds", cpp_sources=[_SCALE], functions=["identity"])
_second = None


class ModelNew(nn.Module):
    def forward(self, x):
        if x.device.type != "cpu":
            raise RuntimeError("this kernel runs on the CPU")
        global _second
        if _second is None:
            _second = load_inline(name="legit_builds", cpp_sources=[_RELU], functions=["relu_forward"])
        return _second.relu_forward(x.contiguous())


assert torch.equal(_first.identity(torch.ones(3)), torch.ones(3)), "the extension's self-test failed"
