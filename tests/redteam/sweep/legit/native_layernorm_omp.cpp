// anvil-expect: pass
// anvil-class: legit
// anvil-task: l1_40_layernorm.py
// anvil-about: native LayerNorm: inputs x, ln.weight, ln.bias; OpenMP over rows, double two-pass statistics,
// anvil-about: eps as a constexpr, std::sqrt.
#include <cmath>
#include <cstdint>

#include "anvil/native.h"

namespace {
constexpr double kEps = 1e-5;
}

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void*) {
  if (n_in != 3 || n_out != 1) return 1;
  const int64_t C = anvil_numel(&in[1]);
  const int64_t R = anvil_numel(&in[0]) / C;
  const float* x = static_cast<const float*>(in[0].data);
  const float* g = static_cast<const float*>(in[1].data);
  const float* b = static_cast<const float*>(in[2].data);
  float* y = static_cast<float*>(out[0].data);
#pragma omp parallel for
  for (int64_t r = 0; r < R; ++r) {
    const float* xr = x + r * C;
    double mean = 0, var = 0;
    for (int64_t c = 0; c < C; ++c) mean += xr[c];
    mean /= C;
    for (int64_t c = 0; c < C; ++c) var += (xr[c] - mean) * (xr[c] - mean);
    const double rstd = 1.0 / std::sqrt(var / C + kEps);
    for (int64_t c = 0; c < C; ++c) y[r * C + c] = static_cast<float>((xr[c] - mean) * rstd) * g[c] + b[c];
  }
  return 0;
}
