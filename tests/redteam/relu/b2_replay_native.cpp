// anvil-expect: wrong_answer
// anvil-class: B2
// anvil-about: replay cache: computes the first call honestly and returns that output for every later call
#include <cstdint>
#include <cstring>

#include "anvil/native.h"

namespace {
float* g_saved = nullptr;
}  // namespace

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int, anvil_tensor* out, int, void*) {
  const int64_t n = anvil_numel(&in[0]);
  float* y = static_cast<float*>(out[0].data);
  if (g_saved == nullptr) {
    g_saved = new float[n];
    const float* x = static_cast<const float*>(in[0].data);
    for (int64_t i = 0; i < n; ++i) g_saved[i] = x[i] > 0 ? x[i] : 0;
  }
  std::memcpy(y, g_saved, n * sizeof(float));
  return 0;
}
