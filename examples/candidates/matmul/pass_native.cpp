// anvil-expect: pass
// anvil-about: C = A @ B with an i-k-j loop nest (inputs A [M,K] and B [K,N], in forward order)
#include <cstdint>

#include "anvil/native.h"

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out,
                               void* /*stream*/) {
  if (n_in != 2 || n_out != 1) return 1;
  const anvil_tensor& a = in[0];
  const anvil_tensor& b = in[1];
  const anvil_tensor& c = out[0];
  if (a.dtype != ANVIL_FLOAT32 || b.dtype != ANVIL_FLOAT32 || c.dtype != ANVIL_FLOAT32) return 2;
  if (a.ndim != 2 || b.ndim != 2 || c.ndim != 2) return 3;
  const int64_t m = a.shape[0], k = a.shape[1], n = b.shape[1];
  if (b.shape[0] != k || c.shape[0] != m || c.shape[1] != n) return 4;
  const float* pa = static_cast<const float*>(a.data);
  const float* pb = static_cast<const float*>(b.data);
  float* pc = static_cast<float*>(c.data);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < m; ++i) {
    float* row = pc + i * n;
    for (int64_t j = 0; j < n; ++j) row[j] = 0.0f;
    for (int64_t p = 0; p < k; ++p) {
      const float aip = pa[i * k + p];
      const float* brow = pb + p * n;
      for (int64_t j = 0; j < n; ++j) row[j] += aip * brow[j];
    }
  }
  return 0;
}
