# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_23_softmax_bf16.py
# anvil-about: bf16 task: forward upcasts with x.float(), runs an fp32 kernel and casts back with
# anvil-about: .to(x.dtype) (casts are plumbing; the reference itself is bf16); if x.is_cuda branch raises.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
#include <cmath>
void softmax_f32(torch::Tensor x, torch::Tensor y) {
  const int64_t R = x.size(0), C = x.size(1);
  const float* px = x.data_ptr<float>();
  float* py = y.data_ptr<float>();
  for (int64_t r = 0; r < R; ++r) {
    float m = px[r * C];
    for (int64_t c = 1; c < C; ++c) m = std::fmax(m, px[r * C + c]);
    double s = 0;
    for (int64_t c = 0; c < C; ++c) { py[r * C + c] = std::exp(px[r * C + c] - m); s += py[r * C + c]; }
    const float inv = static_cast<float>(1.0 / s);
    for (int64_t c = 0; c < C; ++c) py[r * C + c] *= inv;
  }
}
"""

kernels = load_inline(name="legit_softmax_bf16_rt", cpp_sources=SRC, functions=["softmax_f32"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.is_cuda:
            raise NotImplementedError("this submission ships a CPU kernel only")
        xf = x.float().contiguous()
        yf = torch.empty_like(xf)
        kernels.softmax_f32(xf, yf)
        return yf.to(x.dtype)
