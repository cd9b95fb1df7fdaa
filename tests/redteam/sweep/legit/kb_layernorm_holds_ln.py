# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_40_layernorm.py
# anvil-about: LayerNorm: ModelNew keeps nn.LayerNorm (same name `ln`) only for weight/bias/eps and passes them to
# anvil-about: a two-pass C++ kernel (double accumulation); x.view(rows, -1) in forward, .view_as(x) back.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
#include <cmath>

torch::Tensor layer_norm_rows(torch::Tensor x, torch::Tensor gamma, torch::Tensor beta, double eps) {
  TORCH_CHECK(x.dim() == 2 && x.size(1) == gamma.numel() && gamma.numel() == beta.numel(), "shape mismatch");
  const int64_t R = x.size(0), C = x.size(1);
  auto y = torch::empty_like(x);
  const float* px = x.data_ptr<float>();
  const float* g = gamma.data_ptr<float>();
  const float* b = beta.data_ptr<float>();
  float* py = y.data_ptr<float>();
  for (int64_t r = 0; r < R; ++r) {
    const float* xr = px + r * C;
    double mean = 0;
    for (int64_t c = 0; c < C; ++c) mean += xr[c];
    mean /= C;
    double var = 0;
    for (int64_t c = 0; c < C; ++c) { const double d = xr[c] - mean; var += d * d; }
    var /= C;
    const float rstd = static_cast<float>(1.0 / std::sqrt(var + eps));
    const float mu = static_cast<float>(mean);
    for (int64_t c = 0; c < C; ++c) py[r * C + c] = (xr[c] - mu) * rstd * g[c] + b[c];
  }
  return y;
}
"""

ln_ext = load_inline(name="legit_layernorm_rows", cpp_sources=SRC, functions=["layer_norm_rows"], extra_cflags=["-O2"])


class ModelNew(nn.Module):
    def __init__(self, normalized_shape: tuple):
        super(ModelNew, self).__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)  # parameters only
        self.normalized_shape = tuple(normalized_shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = 1
        for s in self.normalized_shape:
            n *= s
        rows = x.contiguous().view(-1, n)
        y = ln_ext.layer_norm_rows(rows, self.ln.weight.reshape(-1), self.ln.bias.reshape(-1), self.ln.eps)
        return y.view_as(x)
