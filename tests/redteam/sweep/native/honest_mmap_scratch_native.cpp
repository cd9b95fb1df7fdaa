// anvil-expect: pass
// anvil-class: legit
// anvil-task: mm256.py
// anvil-about: honest control for the page tricks: an mmap'd scratch (kept across calls, a workspace) holds B
// anvil-about: transposed, and every call computes every element of C as a dot product of a row and a column
#include <cstdint>
#include <sys/mman.h>

#include "anvil/native.h"

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void*) {
  if (n_in != 2 || n_out != 1) return 1;
  const int64_t m = in[0].shape[0], k = in[0].shape[1], n = in[1].shape[1];
  static float* bt = nullptr;
  static int64_t have = 0;
  if (have < k * n) {
    void* p = mmap(nullptr, k * n * sizeof(float), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return 2;
    bt = static_cast<float*>(p);
    have = k * n;
  }
  const float* a = static_cast<const float*>(in[0].data);
  const float* b = static_cast<const float*>(in[1].data);
  float* c = static_cast<float*>(out[0].data);
  for (int64_t p = 0; p < k; ++p)
    for (int64_t j = 0; j < n; ++j) bt[j * k + p] = b[p * n + j];
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float s = 0.0f;
      for (int64_t p = 0; p < k; ++p) s += a[i * k + p] * bt[j * k + p];
      c[i * n + j] = s;
    }
  return 0;
}
