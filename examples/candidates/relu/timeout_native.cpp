// anvil-expect: timeout
// anvil-about: spins forever before doing any work; the harness must kill it at the deadline
#include <cstdint>

#include "anvil/native.h"

namespace {
volatile bool g_spin = true;  // never cleared; volatile so the loop cannot be optimized away
}  // namespace

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out,
                               void* /*stream*/) {
  if (n_in != 1 || n_out != 1) return 1;
  while (g_spin) {
    asm volatile("");
  }
  const int64_t n = anvil_numel(&in[0]);
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  return 0;
}
