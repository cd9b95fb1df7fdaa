// anvil-expect: pass
// anvil-class: legit
// anvil-task: l1_25_swish.py
// anvil-about: native swish with run-time CPU dispatch: __builtin_cpu_supports("avx2") picks an
// anvil-about: __attribute__((target("avx2,fma"))) clone of the loop or the baseline one (function multiversioning by hand).
#include <cmath>
#include <cstdint>

#include "anvil/native.h"

namespace {

__attribute__((target("avx2,fma"))) void SwishAvx2(const float* x, float* y, int64_t n) {
#pragma GCC ivdep
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] / (1.0f + std::exp(-x[i]));
}

void SwishBase(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] / (1.0f + std::exp(-x[i]));
}

}  // namespace

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void*) {
  if (n_in != 1 || n_out != 1) return 1;
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  const int64_t n = anvil_numel(&in[0]);
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    SwishAvx2(x, y, n);
  } else {
    SwishBase(x, y, n);
  }
  return 0;
}
