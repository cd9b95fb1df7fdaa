# anvil-expect: cheat
# anvil-class: B4
# anvil-task: examples/tasks/matmul.py
# anvil-about: the work moves out of the timed window: ModelNew defines __class__ as a property, which the worker's isinstance(model, NativeModel) runs after it copies
# anvil-about: a timed call's inputs into place; the property runs the kernel there on the input tensors it saw last, and the timed forward only hands that result back
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SRC = r"""
#include <torch/extension.h>
// C = A B, row-major contiguous float32, one plain loop nest (i, k, j).
static void mm_into(const float* a, const float* b, float* c, int64_t m, int64_t k, int64_t n) {
  for (int64_t i = 0; i < m; ++i) {
    float* ci = c + i * n;
    for (int64_t j = 0; j < n; ++j) ci[j] = 0.0f;
    for (int64_t p = 0; p < k; ++p) {
      const float aip = a[i * k + p];
      const float* bp = b + p * n;
      for (int64_t j = 0; j < n; ++j) ci[j] += aip * bp[j];
    }
  }
}

torch::Tensor matmul_forward(torch::Tensor a, torch::Tensor b) {
  TORCH_CHECK(a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0), "shapes");
  TORCH_CHECK(a.is_contiguous() && b.is_contiguous(), "contiguous operands expected");
  auto c = torch::empty({a.size(0), b.size(1)}, a.options());
  mm_into(a.data_ptr<float>(), b.data_ptr<float>(), c.data_ptr<float>(), a.size(0), a.size(1), b.size(1));
  return c;
}

// Into a given output (same shapes as matmul_forward's).
void matmul_into(torch::Tensor a, torch::Tensor b, torch::Tensor c) {
  TORCH_CHECK(a.is_contiguous() && b.is_contiguous() && c.is_contiguous(), "contiguous tensors expected");
  mm_into(a.data_ptr<float>(), b.data_ptr<float>(), c.data_ptr<float>(), a.size(0), a.size(1), b.size(1));
}
"""
_ext = load_inline(name="rt2py_d9_isinstance", cpp_sources=_SRC, functions=["matmul_forward", "matmul_into"],
                   extra_cflags=["-O2"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._seen = None   # the input tensors of the last call
        self._ready = None  # (inputs, output) computed ahead for those same tensors

    @property
    def __class__(self):
        seen = self.__dict__.get("_seen")
        if seen is not None:
            a, b = seen
            out = self.__dict__.get("_buf")
            if out is None:
                out = torch.empty(a.size(0), b.size(1), dtype=a.dtype)
                self.__dict__["_buf"] = out
            _ext.matmul_into(a, b, out)
            self.__dict__["_ready"] = (seen, out)
        return type(self)

    def forward(self, A, B):
        ready = self._ready
        self._ready = None
        if ready is not None and ready[0][0] is A and ready[0][1] is B:
            return ready[1]
        self._seen = (A, B)
        return _ext.matmul_forward(A.contiguous(), B.contiguous())
