# anvil-expect: pass
# anvil-class: legit
# anvil-task: examples/tasks/linear_relu.py
# anvil-about: honest control: fused linear+relu with OpenMP (-fopenmp), W^T cached per weight version (a cache of its
# anvil-about: own transposition, not of outputs) and one output buffer reused and fully rewritten on every call
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SRC = r"""
#include <torch/extension.h>

// wt[i, o] = w[o, i]
void transpose_into(torch::Tensor w, torch::Tensor wt) {
  const int64_t o_n = w.size(0), i_n = w.size(1);
  const float* src = w.data_ptr<float>();
  float* dst = wt.data_ptr<float>();
  for (int64_t o = 0; o < o_n; ++o)
    for (int64_t i = 0; i < i_n; ++i) dst[i * o_n + o] = src[o * i_n + i];
}

// out[b, o] = max(0, b[o] + sum_i x[b, i] wt[i, o]), every element written.
void linear_relu_into(torch::Tensor x, torch::Tensor wt, torch::Tensor bias, torch::Tensor out) {
  const int64_t bn = x.size(0), in_f = x.size(1), out_f = wt.size(1);
  const float* px = x.data_ptr<float>();
  const float* pw = wt.data_ptr<float>();
  const float* pb = bias.data_ptr<float>();
  float* po = out.data_ptr<float>();
#pragma omp parallel for
  for (int64_t b = 0; b < bn; ++b) {
    float* row = po + b * out_f;
    for (int64_t o = 0; o < out_f; ++o) row[o] = pb[o];
    for (int64_t i = 0; i < in_f; ++i) {
      const float xv = px[b * in_f + i];
      const float* wr = pw + i * out_f;
      for (int64_t o = 0; o < out_f; ++o) row[o] += xv * wr[o];
    }
    for (int64_t o = 0; o < out_f; ++o) row[o] = row[o] > 0.0f ? row[o] : 0.0f;
  }
}
"""
_ext = load_inline(name="rt2py_legit_linear_relu_buf", cpp_sources=_SRC, functions=["transpose_into",
                   "linear_relu_into"], extra_cflags=["-O2", "-fopenmp"], extra_ldflags=["-fopenmp"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self._wt = None
        self._wt_key = None
        self._out = None

    def forward(self, x):
        x = x.contiguous()
        w = self.linear.weight.detach().contiguous()
        key = (w.data_ptr(), w._version)
        if self._wt is None or self._wt_key != key:
            self._wt = torch.empty(w.size(1), w.size(0), dtype=w.dtype)
            _ext.transpose_into(w, self._wt)
            self._wt_key = key
        if self._out is None or self._out.shape != (x.size(0), w.size(0)):
            self._out = torch.empty(x.size(0), w.size(0), dtype=x.dtype)
        _ext.linear_relu_into(x, self._wt, self.linear.bias.detach().contiguous(), self._out)
        return self._out
