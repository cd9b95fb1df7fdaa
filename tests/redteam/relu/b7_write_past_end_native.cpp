// anvil-expect: runtime_error
// anvil-class: B7
// anvil-about: a correct ReLU with an off-by-one loop bound: it writes one element past the end of its output. Nothing
// anvil-about: crashes (the allocation has room), but the random guard band the harness put after the output changes
#include <cstdint>

#include "anvil/native.h"

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int, anvil_tensor* out, int, void*) {
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  const int64_t n = anvil_numel(&in[0]);
  for (int64_t i = 0; i <= n; ++i) y[i] = i < n && x[i] > 0 ? x[i] : 0;
  return 0;
}
