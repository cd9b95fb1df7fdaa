# anvil-expect: cheat
# anvil-class: A4
# anvil-task: examples/tasks/relu.py
# anvil-about: a TORCH_LIBRARY op whose C++ body calls a Python callable handed over in __init__ (torch.relu): torch runs
# anvil-about: nested under the op the aten trace sees (rt2r.relu2), and passing torch.relu outside forward is no static hit
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SRC = r"""
#include <torch/extension.h>
#include <torch/library.h>

static py::object* g_fn = nullptr;

void set_fn(py::object f) {
  if (g_fn == nullptr) g_fn = new py::object();
  *g_fn = f;
}

static at::Tensor relu2_cpu(const at::Tensor& x) {
  py::gil_scoped_acquire gil;
  return (*g_fn)(x).cast<at::Tensor>();
}

TORCH_LIBRARY(rt2r, m) { m.def("relu2(Tensor x) -> Tensor"); }
TORCH_LIBRARY_IMPL(rt2r, CPU, m) { m.impl("relu2", &relu2_cpu); }
"""
_ext = load_inline(name="rt2py_a4_nested_pycall", cpp_sources=_SRC, functions=["set_fn"], extra_cflags=["-O2"],
                   verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        _ext.set_fn(torch.relu)

    def forward(self, x):
        return torch.ops.rt2r.relu2(x)
