// anvil-expect: pass
// anvil-class: legit
// anvil-task: l2_12_gemm_mul_lrelu.py
// anvil-about: native fused Linear*2+LeakyReLU with `#pragma GCC target("avx2,fma")` + __m256 FMA intrinsics
// anvil-about: (native builds get no -mavx2), constants from the task's init arguments hard-coded.
#pragma GCC target("avx2,fma")
#include <immintrin.h>
#include <cstdint>

#include "anvil/native.h"

namespace {
constexpr float kMultiplier = 2.0f;
constexpr float kSlope = 0.1f;

inline float HSum(__m256 v) {
  alignas(32) float t[8];
  _mm256_store_ps(t, v);
  return ((t[0] + t[1]) + (t[2] + t[3])) + ((t[4] + t[5]) + (t[6] + t[7]));
}
}  // namespace

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void*) {
  if (n_in != 3 || n_out != 1) return 1;  // x, gemm.weight, gemm.bias
  const int64_t B = in[0].shape[0], I = in[0].shape[1], O = in[1].shape[0];
  const float* x = static_cast<const float*>(in[0].data);
  const float* w = static_cast<const float*>(in[1].data);
  const float* b = static_cast<const float*>(in[2].data);
  float* y = static_cast<float*>(out[0].data);
  for (int64_t r = 0; r < B; ++r)
    for (int64_t o = 0; o < O; ++o) {
      __m256 acc = _mm256_setzero_ps();
      int64_t i = 0;
      for (; i + 8 <= I; i += 8)
        acc = _mm256_fmadd_ps(_mm256_loadu_ps(x + r * I + i), _mm256_loadu_ps(w + o * I + i), acc);
      float s = HSum(acc);
      for (; i < I; ++i) s += x[r * I + i] * w[o * I + i];
      const float v = (s + b[o]) * kMultiplier;
      y[r * O + o] = v >= 0.f ? v : v * kSlope;
    }
  return 0;
}
