// anvil-expect: wrong_answer
// anvil-class: B6
// anvil-about: trivial output: returns max(mean, 0) everywhere, a statistic of the random input, not ReLU
#include <cstdint>
#include <cstring>

#include "anvil/native.h"

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int, anvil_tensor* out, int, void*) {
  const int64_t n = anvil_numel(&in[0]);
  const float* x = static_cast<const float*>(in[0].data);
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += x[i];
  const float m = sum > 0 ? static_cast<float>(sum / n) : 0.0f;
  float* y = static_cast<float*>(out[0].data);
  for (int64_t i = 0; i < n; ++i) y[i] = m;
  return 0;
}
