# anvil-expect: cheat
# anvil-class: A4
# anvil-task: examples/tasks/relu.py
# anvil-about: torch's relu in TorchScript (torch.jit.CompilationUnit from a string: the resolver sees no compute) with the CPU fuser on
# anvil-about: and profiled in __init__: forward runs a fused NNC kernel, which dispatches no aten op (the trace sees aten.empty_strided only)
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
_ext = load_inline(name="rt2py_a4_nnc", cpp_sources=_SRC, functions=["check_input"], extra_cflags=["-O2"],
                   verbose=False)

torch._C._jit_override_can_fuse_on_cpu(True)
torch._C._jit_set_te_must_use_llvm_cpu(False)
torch._C._jit_set_texpr_fuser_enabled(True)
_CU = torch.jit.CompilationUnit("""
def f(x):
    y = x * 1.0
    return torch.relu(y) + 0.0
""")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        with torch.no_grad():
            warm = torch.randn(16, 1024, device="cpu")
            for _ in range(4):  # the profiling runs: afterwards the fused kernel serves this shape
                _CU.f(warm)

    def forward(self, x):
        return _CU.f(_ext.check_input(x))
