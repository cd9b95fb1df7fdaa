// anvil-expect: runtime_error
// anvil-about: a descriptor bomb: computes the right answer, then opens eventfds until the kernel refuses and keeps
// anvil-about: them all, so its worker has none left to write the outputs with (bounded at 1 << 20 descriptors)
#include <sys/eventfd.h>

#include <cstdint>

#include "anvil/native.h"

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void* /*stream*/) {
  if (n_in != 1 || n_out != 1) return 1;
  const int64_t n = anvil_numel(&in[0]);
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  for (int i = 0; i < (1 << 20) && eventfd(0, 0) >= 0; ++i) {
  }
  return 0;
}
