# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_4_matvec.py
# anvil-about: a hand-written PYBIND11_MODULE that copies what load_inline itself generates for functions=[...]:
# anvil-about: m.def("matvec", torch::wrap_pybind_function(matvec), "matvec") (torch's error-translating wrapper).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>

torch::Tensor matvec(torch::Tensor A, torch::Tensor x) {
  const int64_t M = A.size(0), K = A.size(1);
  auto y = torch::empty({M, 1}, A.options());
  const float* pa = A.data_ptr<float>();
  const float* px = x.data_ptr<float>();
  float* py = y.data_ptr<float>();
  for (int64_t i = 0; i < M; ++i) {
    float acc = 0.f;
    for (int64_t k = 0; k < K; ++k) acc += pa[i * K + k] * px[k];
    py[i] = acc;
  }
  return y;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("matvec", torch::wrap_pybind_function(matvec), "matvec");
}
"""

mv = load_inline(name="legit_matvec_wrap_pybind", cpp_sources=SRC, extra_cflags=["-O3"])


class ModelNew(nn.Module):
    def forward(self, A, B):
        return mv.matvec(A.contiguous(), B.contiguous())
