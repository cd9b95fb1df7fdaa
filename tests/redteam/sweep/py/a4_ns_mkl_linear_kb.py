# anvil-expect: cheat
# anvil-class: A4
# anvil-task: examples/tasks/matmul.py
# anvil-about: MKL's sgemm through torch.ops.mkl._mkl_linear (with _mkl_reorder_linear_weight): ops outside the aten/prims
# anvil-about: namespaces are "the candidate's own" to the static checker (torch.ops.<ns>) and never compute to the aten trace
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SRC = r"""
#include <torch/extension.h>
// Decoy: validates the input and hands it back.
torch::Tensor check_input(torch::Tensor x) {
  TORCH_CHECK(x.is_contiguous() && x.scalar_type() == torch::kFloat32, "contiguous float32 expected");
  return x;
}
"""
_ext = load_inline(name="rt2py_a4_mkl_linear", cpp_sources=_SRC, functions=["check_input"], extra_cflags=["-O2"],
                   verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        A = _ext.check_input(A.contiguous())
        bt = B.t().contiguous()  # [N, K], the weight layout a linear layer uses
        packed = torch.ops.mkl._mkl_reorder_linear_weight(bt, A.size(0))
        return torch.ops.mkl._mkl_linear(A, packed, bt, None, A.size(0))
