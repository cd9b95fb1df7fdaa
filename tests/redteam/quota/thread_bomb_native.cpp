// anvil-expect: runtime_error
// anvil-about: a thread bomb through OpenMP (threads it may start): asks for 512 threads before any output; its
// anvil-about: process quota stops it (libgomp cannot start them and ends the process)
#include <cstdint>

#include "anvil/native.h"

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void* /*stream*/) {
  if (n_in != 1 || n_out != 1) return 1;
  const int64_t n = anvil_numel(&in[0]);
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
#pragma omp parallel for num_threads(512) schedule(static)  // Bounded: 512 threads if no quota held.
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  return 0;
}
