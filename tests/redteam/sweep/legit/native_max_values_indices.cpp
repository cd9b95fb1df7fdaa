// anvil-expect: pass
// anvil-class: legit
// anvil-task: l1_49_max_with_indices.py
// anvil-about: native max over dim 1 with two outputs (a tuple in the reference): values float32, indices int64.
#include <cstdint>

#include "anvil/native.h"

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void*) {
  if (n_in != 1 || n_out != 2 || out[1].dtype != ANVIL_INT64) return 1;
  const int64_t B = in[0].shape[0], N = in[0].shape[1], M = in[0].shape[2];
  const float* x = static_cast<const float*>(in[0].data);
  float* v = static_cast<float*>(out[0].data);
  int64_t* idx = static_cast<int64_t*>(out[1].data);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t m = 0; m < M; ++m) {
      int64_t best = 0;
      for (int64_t k = 1; k < N; ++k)
        if (x[(b * N + k) * M + m] > x[(b * N + best) * M + m]) best = k;
      v[b * M + m] = x[(b * N + best) * M + m];
      idx[b * M + m] = best;
    }
  return 0;
}
