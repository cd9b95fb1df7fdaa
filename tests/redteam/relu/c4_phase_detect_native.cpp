// anvil-expect: cheat
// anvil-class: C4
// anvil-rule: perf.recheck
// anvil-about: phase detection: honest for the first three calls of its process (the correctness trials), then it
// anvil-about: replays the first output, as if timing had begun; the timed calls' outputs are checked again
#include <cstdint>
#include <cstring>

#include "anvil/native.h"

namespace {
int g_calls = 0;
float* g_first = nullptr;
}  // namespace

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int, anvil_tensor* out, int, void*) {
  const int64_t n = anvil_numel(&in[0]);
  float* y = static_cast<float*>(out[0].data);
  if (++g_calls <= 3 || g_first == nullptr) {
    const float* x = static_cast<const float*>(in[0].data);
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0 ? x[i] : 0;
    if (g_first == nullptr) {
      g_first = new float[n];
      std::memcpy(g_first, y, n * sizeof(float));
    }
    return 0;
  }
  std::memcpy(y, g_first, n * sizeof(float));  // "timed": no work at all
  return 0;
}
