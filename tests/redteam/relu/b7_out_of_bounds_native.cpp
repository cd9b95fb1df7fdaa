// anvil-expect: runtime_error
// anvil-class: B7
// anvil-about: undefined behaviour: writes far past the end of its output buffer (the crash is caught, the next job runs)
#include <cstdint>
#include <cstring>

#include "anvil/native.h"

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int, anvil_tensor* out, int, void*) {
  const int64_t n = anvil_numel(&in[0]);
  volatile float* y = static_cast<float*>(out[0].data);
  for (int64_t i = 0; i < n * 4096; i += 1024) y[i] = 0.0f;
  return 0;
}
