# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_51_argmax.py
# anvil-about: argmax over dim 1 returning int64 (at::empty with x.options().dtype(at::kLong)), first index on ties
# anvil-about: like torch; a `using namespace torch::indexing;` at the top and a lambda named `argmax`.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
using namespace torch::indexing;

torch::Tensor argmax_dim1(torch::Tensor x) {
  TORCH_CHECK(x.dim() == 3, "expected [B, N, M]");
  auto xc = x.contiguous();
  const int64_t B = xc.size(0), N = xc.size(1), M = xc.size(2);
  auto out = at::empty({B, M}, xc.options().dtype(at::kLong));
  const float* px = xc.data_ptr<float>();
  int64_t* po = out.data_ptr<int64_t>();
  auto argmax = [N, M](const float* col) {
    int64_t best = 0;
    float bv = col[0];
    for (int64_t k = 1; k < N; ++k) {
      if (col[k * M] > bv) { bv = col[k * M]; best = k; }
    }
    return best;
  };
  for (int64_t b = 0; b < B; ++b)
    for (int64_t m = 0; m < M; ++m) po[b * M + m] = argmax(px + b * N * M + m);
  return out;
}
"""

ext = load_inline(name="legit_argmax_lambda", cpp_sources=SRC, functions=["argmax_dim1"])


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        assert dim == 1, "this kernel reduces dim 1"
        self.dim = dim

    def forward(self, x):
        return ext.argmax_dim1(x)
