// anvil-expect: pass
// anvil-class: legit
// anvil-task: l1_20_leakyrelu_fp16.py
// anvil-about: native fp16 LeakyReLU: F16C/AVX2 through __attribute__((target("avx2,f16c"))) (native builds take no
// anvil-about: flags), with a portable bit-exact half<->float fallback for the tail.
#include <immintrin.h>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "anvil/native.h"

namespace {

float HalfToFloat(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {
      exp = 127 - 15 + 1;
      while ((mant & 0x400) == 0) { mant <<= 1; --exp; }
      mant &= 0x3ff;
      bits = sign | (exp << 23) | (mant << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

__attribute__((target("avx2,f16c"))) uint16_t FloatToHalf(float f) {
  return static_cast<uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT));
}

__attribute__((target("avx2,f16c"))) void Body(const uint16_t* x, uint16_t* y, int64_t n, float slope) {
  const __m256 vs = _mm256_set1_ps(slope), zero = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 v = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i)));
    __m256 r = _mm256_blendv_ps(v, _mm256_mul_ps(v, vs), _mm256_cmp_ps(v, zero, _CMP_LT_OQ));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), _mm256_cvtps_ph(r, _MM_FROUND_TO_NEAREST_INT));
  }
  for (; i < n; ++i) {
    const float v = HalfToFloat(x[i]);
    y[i] = FloatToHalf(v < 0.f ? v * slope : v);
  }
}

}  // namespace

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void*) {
  if (n_in != 1 || n_out != 1 || in[0].dtype != ANVIL_FLOAT16 || out[0].dtype != ANVIL_FLOAT16) return 1;
  Body(static_cast<const uint16_t*>(in[0].data), static_cast<uint16_t*>(out[0].data), anvil_numel(&in[0]), 0.01f);
  return 0;
}
