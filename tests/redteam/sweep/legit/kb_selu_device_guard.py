# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_27_selu.py
# anvil-about: device-generic extension boilerplate: at::OptionalDeviceGuard guard(at::device_of(x)) before
# anvil-about: allocating (a no-op on the CPU; the usual guard in CUDA/CPU extensions), then a plain SELU loop.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
#include <c10/core/DeviceGuard.h>
#include <cmath>

torch::Tensor selu_fwd(torch::Tensor x) {
  at::OptionalDeviceGuard guard(at::device_of(x));
  auto xc = x.contiguous();
  auto y = at::empty_like(xc);
  const float* px = xc.data_ptr<float>();
  float* py = y.data_ptr<float>();
  for (int64_t i = 0; i < xc.numel(); ++i)
    py[i] = 1.0507009873554805f * (px[i] > 0.f ? px[i] : 1.6732632423543772f * std::expm1(px[i]));
  return y;
}
"""

_ext = load_inline(name="legit_selu_device_guard", cpp_sources=SRC, functions=["selu_fwd"])


class ModelNew(nn.Module):
    def forward(self, x):
        return _ext.selu_fwd(x)
