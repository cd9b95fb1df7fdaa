// anvil-expect: pass
// anvil-class: legit
// anvil-task: l1_51_argmax.py
// anvil-about: native argmax over dim 1 writing an int64 output (ANVIL_INT64), std::numeric_limits.
#include <cstdint>
#include <limits>

#include "anvil/native.h"

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void*) {
  if (n_in != 1 || n_out != 1 || in[0].ndim != 3 || out[0].dtype != ANVIL_INT64) return 1;
  const int64_t B = in[0].shape[0], N = in[0].shape[1], M = in[0].shape[2];
  const float* x = static_cast<const float*>(in[0].data);
  int64_t* y = static_cast<int64_t*>(out[0].data);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t m = 0; m < M; ++m) {
      float best = -std::numeric_limits<float>::infinity();
      int64_t idx = 0;
      for (int64_t k = 0; k < N; ++k) {
        const float v = x[(b * N + k) * M + m];
        if (v > best) { best = v; idx = k; }
      }
      y[b * M + m] = idx;
    }
  }
  return 0;
}
