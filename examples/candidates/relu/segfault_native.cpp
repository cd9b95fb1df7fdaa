// anvil-expect: runtime_error
// anvil-about: writes through a null pointer; the crash (SIGSEGV) is reported as runtime_error
#include <cstdint>

#include "anvil/native.h"

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out,
                               void* /*stream*/) {
  if (n_in != 1 || n_out != 1) return 1;
  const int64_t n = anvil_numel(&in[0]);
  const float* x = static_cast<const float*>(in[0].data);
  float* y = nullptr;  // bug: the output pointer is never set
  asm volatile("" : "+r"(y));  // hide the null from the optimizer so the stores are really made
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  (void)out;
  return 0;
}
