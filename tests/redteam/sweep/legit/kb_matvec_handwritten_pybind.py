# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_4_matvec.py
# anvil-about: PYBIND11_MODULE written by hand (functions=None), py::arg keywords, a void kernel writing into an
# anvil-about: output allocated in Python with torch.empty, AT_DISPATCH_FLOATING_TYPES template, .flatten().
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>

template <typename scalar_t>
static void matvec_impl(const scalar_t* a, const scalar_t* x, scalar_t* y, int64_t M, int64_t K) {
  for (int64_t i = 0; i < M; ++i) {
    scalar_t acc = 0;
    for (int64_t k = 0; k < K; ++k) acc += a[i * K + k] * x[k];
    y[i] = acc;
  }
}

void matvec_out(torch::Tensor A, torch::Tensor x, torch::Tensor y) {
  TORCH_CHECK(y.numel() == A.size(0), "output has the wrong size");
  AT_DISPATCH_FLOATING_TYPES(A.scalar_type(), "matvec_out", [&] {
    matvec_impl<scalar_t>(A.data_ptr<scalar_t>(), x.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), A.size(0), A.size(1));
  });
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.doc() = "matrix-vector product";
  m.def("matvec_out", &matvec_out, "y = A x (writes y)", py::arg("A"), py::arg("x"), py::arg("y"));
}
"""

_mv = load_inline(name="legit_matvec_pybind", cpp_sources=_CPP, functions=None, extra_cflags=["-O2"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        A = A.contiguous()
        x = B.flatten().contiguous()
        y = torch.empty((A.shape[0], 1), dtype=A.dtype, device=A.device)
        _mv.matvec_out(A=A, x=x, y=y)
        return y
