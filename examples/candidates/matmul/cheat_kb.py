# anvil-expect: cheat
# anvil-about: the "custom" C++ kernel just calls at::matmul, i.e. the library does the work
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SOURCE = r"""
#include <torch/extension.h>

torch::Tensor matmul_forward(torch::Tensor a, torch::Tensor b) {
  TORCH_CHECK(a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0), "expected A [M, K] and B [K, N]");
  return at::matmul(a.contiguous(), b.contiguous());
}
"""

_ext = load_inline(
    name="anvil_example_matmul_cheat",
    cpp_sources=_SOURCE,
    functions=["matmul_forward"],
    extra_cflags=["-O2"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return _ext.matmul_forward(A, B)
