# anvil-expect: wrong_answer
# anvil-class: legit
# anvil-task: examples/tasks/relu.py
# anvil-about: odd dtype: an honest relu whose output is float64 for a float32 task (right values, wrong dtype): the
# anvil-about: comparison checks the dtype from the manifest, so this must be wrong_answer, never pass or cheat
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SRC = r"""
#include <torch/extension.h>

torch::Tensor relu_double(torch::Tensor x) {
  TORCH_CHECK(x.is_contiguous() && x.scalar_type() == torch::kFloat32, "contiguous float32 expected");
  auto out = torch::empty(x.sizes(), x.options().dtype(torch::kFloat64));
  const float* s = x.data_ptr<float>();
  double* d = out.data_ptr<double>();
  for (int64_t i = 0, n = x.numel(); i < n; ++i) d[i] = s[i] > 0.0f ? s[i] : 0.0;
  return out;
}
"""
_ext = load_inline(name="rt2py_o_float64", cpp_sources=_SRC, functions=["relu_double"], extra_cflags=["-O2"],
                   verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.relu_double(x.contiguous())
