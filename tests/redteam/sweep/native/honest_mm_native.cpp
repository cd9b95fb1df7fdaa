// anvil-expect: pass
// anvil-class: legit
// anvil-task: mm256.py
// anvil-about: honest control: C = A @ B with an i-k-j loop nest and OpenMP (same kernel the cheats wrap)
#include <cstdint>

#include "anvil/native.h"

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void*) {
  if (n_in != 2 || n_out != 1) return 1;
  const int64_t m = in[0].shape[0], k = in[0].shape[1], n = in[1].shape[1];
  const float* a = static_cast<const float*>(in[0].data);
  const float* b = static_cast<const float*>(in[1].data);
  float* c = static_cast<float*>(out[0].data);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < m; ++i) {
    float* row = c + i * n;
    for (int64_t j = 0; j < n; ++j) row[j] = 0.0f;
    for (int64_t p = 0; p < k; ++p) {
      const float s = a[i * k + p];
      const float* br = b + p * n;
      for (int64_t j = 0; j < n; ++j) row[j] += s * br[j];
    }
  }
  return 0;
}
