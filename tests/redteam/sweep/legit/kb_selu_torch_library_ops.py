# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_27_selu.py
# anvil-about: the kernel registered as a torch op with TORCH_LIBRARY / TORCH_LIBRARY_IMPL(CPU) and loaded with
# anvil-about: is_python_module=False; forward calls torch.ops.legit_selu.selu(x).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
#include <torch/library.h>
#include <cmath>

at::Tensor selu_cpu(const at::Tensor& x) {
  auto xc = x.contiguous();
  auto y = at::empty_like(xc);
  const float* px = xc.data_ptr<float>();
  float* py = y.data_ptr<float>();
  constexpr float alpha = 1.6732632423543772f, scale = 1.0507009873554805f;
  for (int64_t i = 0; i < xc.numel(); ++i) {
    const float v = px[i];
    py[i] = scale * (v > 0.f ? v : alpha * std::expm1(v));
  }
  return y;
}

TORCH_LIBRARY(legit_selu, m) {
  m.def("selu(Tensor x) -> Tensor");
}

TORCH_LIBRARY_IMPL(legit_selu, CPU, m) {
  m.impl("selu", &selu_cpu);
}
"""

load_inline(name="legit_selu_torchlib", cpp_sources=SRC, is_python_module=False, extra_cflags=["-O2"])


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.ops.legit_selu.selu(x)
