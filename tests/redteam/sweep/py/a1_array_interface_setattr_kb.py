# anvil-expect: cheat
# anvil-class: A1
# anvil-task: examples/tasks/softmax.py
# anvil-about: numpy computes the softmax on the tensors' memory through an object whose __array_interface__ is attached with setattr under a name built at run time (never
# anvil-about: an attribute node in the source, no class body member), so neither the static host rule nor the host trace (tensor methods only) sees the data leave for numpy
import numpy as np
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SRC = r"""
#include <torch/extension.h>
// Decoy: validates the input and hands it back.
torch::Tensor check_input(torch::Tensor x) {
  TORCH_CHECK(x.is_contiguous() && x.dim() == 2, "contiguous 2-D input expected");
  return x;
}
"""
_ext = load_inline(name="rt2py_a1_array_iface", cpp_sources=_SRC, functions=["check_input"], extra_cflags=["-O2"],
                   verbose=False)


class _Mem:
    def __init__(self, t):
        self.spec = {"data": (t.data_ptr(), False), "shape": tuple(t.shape), "typestr": "<f4", "version": 3}


setattr(_Mem, "".join(reversed("__ecafretni_yarra__")), property(lambda self: self.spec))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = _ext.check_input(x.contiguous())
        out = torch.empty_like(x)
        a, o = np.asarray(_Mem(x)), np.asarray(_Mem(out))
        np.subtract(a, a.max(axis=1, keepdims=True), out=o)
        np.exp(o, out=o)
        o /= o.sum(axis=1, keepdims=True)
        return out
