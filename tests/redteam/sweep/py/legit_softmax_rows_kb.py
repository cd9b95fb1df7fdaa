# anvil-expect: pass
# anvil-class: legit
# anvil-task: examples/tasks/softmax.py
# anvil-about: honest control: row softmax in one C++ pass per row (max, exp-sum, scale) with std::exp; nothing else
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SRC = r"""
#include <torch/extension.h>
#include <cmath>

torch::Tensor softmax_rows(torch::Tensor x) {
  TORCH_CHECK(x.dim() == 2 && x.is_contiguous() && x.scalar_type() == torch::kFloat32, "contiguous 2-D float32");
  auto out = torch::empty_like(x);
  const int64_t rows = x.size(0), cols = x.size(1);
  const float* src = x.data_ptr<float>();
  float* dst = out.data_ptr<float>();
  for (int64_t r = 0; r < rows; ++r) {
    const float* s = src + r * cols;
    float* d = dst + r * cols;
    float m = s[0];
    for (int64_t c = 1; c < cols; ++c) m = s[c] > m ? s[c] : m;
    double sum = 0.0;
    for (int64_t c = 0; c < cols; ++c) {
      d[c] = std::exp(s[c] - m);
      sum += d[c];
    }
    const float inv = static_cast<float>(1.0 / sum);
    for (int64_t c = 0; c < cols; ++c) d[c] *= inv;
  }
  return out;
}
"""
_ext = load_inline(name="rt2py_legit_softmax", cpp_sources=_SRC, functions=["softmax_rows"], extra_cflags=["-O2"],
                   verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.softmax_rows(x.contiguous())
