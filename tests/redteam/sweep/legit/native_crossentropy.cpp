// anvil-expect: pass
// anvil-class: legit
// anvil-task: l1_95_crossentropy.py
// anvil-about: native cross entropy: float32 logits + int64 targets in, a 0-dim float32 out; std::vector of
// anvil-about: per-row losses summed with std::accumulate (double).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "anvil/native.h"

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void*) {
  if (n_in != 2 || n_out != 1 || in[1].dtype != ANVIL_INT64 || out[0].ndim != 0) return 1;
  const int64_t B = in[0].shape[0], C = in[0].shape[1];
  const float* x = static_cast<const float*>(in[0].data);
  const int64_t* t = static_cast<const int64_t*>(in[1].data);
  std::vector<double> loss(static_cast<size_t>(B));
  for (int64_t b = 0; b < B; ++b) {
    const float* row = x + b * C;
    const float m = *std::max_element(row, row + C);
    double s = 0;
    for (int64_t c = 0; c < C; ++c) s += std::exp(static_cast<double>(row[c]) - m);
    loss[b] = m + std::log(s) - row[t[b]];
  }
  *static_cast<float*>(out[0].data) = static_cast<float>(std::accumulate(loss.begin(), loss.end(), 0.0) / B);
  return 0;
}
