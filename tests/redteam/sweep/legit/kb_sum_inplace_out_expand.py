# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_47_sum_reduce.py
# anvil-about: keepdim sum written in place into torch.zeros([B, 1, M]) allocated in Python (accumulating kernel,
# anvil-about: void return); shape checks raise ValueError; the output buffer is kept and reused across calls.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
void sum_dim1_accumulate(torch::Tensor x, torch::Tensor out) {
  const int64_t B = x.size(0), N = x.size(1), M = x.size(2);
  TORCH_CHECK(out.numel() == B * M, "out must hold B*M elements");
  const float* px = x.data_ptr<float>();
  float* po = out.data_ptr<float>();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t k = 0; k < N; ++k)
      for (int64_t m = 0; m < M; ++m) po[b * M + m] += px[(b * N + k) * M + m];
}
"""

_ext = load_inline(name="legit_sum_accumulate", cpp_sources=SRC, functions=["sum_dim1_accumulate"])


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        if dim != 1:
            raise ValueError("kernel written for dim=1")
        self.dim = dim
        self._out = None

    def forward(self, x):
        if x.dim() != 3:
            raise ValueError(f"expected a 3-D input, got {x.dim()}-D")
        B, _, M = x.shape
        if self._out is None or self._out.shape != (B, 1, M):
            self._out = torch.zeros((B, 1, M), dtype=x.dtype, device=x.device)
        else:
            self._out.zero_()
        _ext.sum_dim1_accumulate(x.contiguous(), self._out)
        return self._out
