# anvil-expect: cheat
# anvil-class: A4
# anvil-task: examples/tasks/matmul.py
# anvil-about: a TORCH_LIBRARY op of its own (C++) whose body looks "aten::mm" up in the dispatcher by string: the aten trace
# anvil-about: sees only rt2mm.mm2 (the mode is off while its op runs), the source and symbol scans see no ATen name
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SRC = r"""
#include <torch/extension.h>
#include <torch/library.h>

static at::Tensor mm2_cpu(const at::Tensor& a, const at::Tensor& b) {
  static auto op = c10::Dispatcher::singleton()
                       .findSchemaOrThrow("aten::mm", "")
                       .typed<at::Tensor(const at::Tensor&, const at::Tensor&)>();
  return op.call(a, b);
}

TORCH_LIBRARY(rt2mm, m) { m.def("mm2(Tensor a, Tensor b) -> Tensor"); }
TORCH_LIBRARY_IMPL(rt2mm, CPU, m) { m.impl("mm2", &mm2_cpu); }

// The module's own entry point (the ops above register when it loads).
torch::Tensor check_operands(torch::Tensor a, torch::Tensor b) {
  TORCH_CHECK(a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0), "shapes");
  return a;
}
"""
_ext = load_inline(name="rt2py_a4_nested_tl", cpp_sources=_SRC, functions=["check_operands"], extra_cflags=["-O2"],
                   verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.ops.rt2mm.mm2(_ext.check_operands(A, B), B)
