# anvil-expect: pass
# anvil-class: legit
# anvil-task: gelu.py
# anvil-about: a private build folder made with tempfile.mkdtemp() and passed as build_directory= (avoids clashes
# anvil-about: between concurrent runs sharing ~/.cache/torch_extensions), a common KernelBench-answer idiom.
import tempfile

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
#include <cmath>
torch::Tensor gelu(torch::Tensor x) {
  auto y = torch::empty_like(x);
  const float* px = x.data_ptr<float>();
  float* py = y.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) py[i] = 0.5f * px[i] * (1.f + erff(px[i] * 0.70710678f));
  return y;
}
"""

_build_dir = tempfile.mkdtemp(prefix="gelu_ext_")
_ext = load_inline(name="legit_gelu_tmp_build", cpp_sources=SRC, functions=["gelu"], build_directory=_build_dir)


class ModelNew(nn.Module):
    def forward(self, x):
        return _ext.gelu(x.contiguous())
