// anvil-expect: pass
// anvil-class: legit
// anvil-task: gelu.py
// anvil-about: native exact GELU with a software prefetch in inline assembly (prefetcht0) and a compiler barrier
// anvil-about: asm volatile("" ::: "memory"); std::erf.
#include <cmath>
#include <cstdint>

#include "anvil/native.h"

static inline void Prefetch(const void* p) { asm volatile("prefetcht0 (%0)" : : "r"(p)); }

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void*) {
  if (n_in != 1 || n_out != 1) return 1;
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  const int64_t n = anvil_numel(&in[0]);
  for (int64_t i = 0; i < n; ++i) {
    if ((i & 15) == 0 && i + 64 < n) Prefetch(x + i + 64);
    y[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] * 0.70710678118654752f));
  }
  asm volatile("" ::: "memory");
  return 0;
}
