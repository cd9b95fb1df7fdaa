# anvil-expect: pass
# anvil-class: legit
# anvil-task: gelu.py
# anvil-about: load_inline(verbose=True) (the build log goes to stdout), a print() at import and one print on the
# anvil-about: first forward call (shape only), as debugging code left in a submission often does.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
#include <cmath>
torch::Tensor gelu_erf(torch::Tensor x) {
  auto y = torch::empty_like(x);
  const float* px = x.data_ptr<float>();
  float* py = y.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) py[i] = 0.5f * px[i] * (1.f + std::erf(px[i] * 0.70710678f));
  return y;
}
"""

print("building gelu extension ...")
gelu_mod = load_inline(name="legit_gelu_verbose", cpp_sources=SRC, functions=["gelu_erf"], verbose=True)
print("gelu extension ready")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._announced = False

    def forward(self, x):
        if not self._announced:
            print(f"[ModelNew] first call, input {tuple(x.shape)} {x.dtype}")
            self._announced = True
        return gelu_mod.gelu_erf(x.contiguous())
