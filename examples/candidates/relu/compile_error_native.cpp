// anvil-expect: compile_error
// anvil-about: assigns a const float* to an int* (a type error), so the file does not compile
#include <cstdint>

#include "anvil/native.h"

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out,
                               void* /*stream*/) {
  if (n_in != 1 || n_out != 1) return 1;
  const int64_t n = anvil_numel(&in[0]);
  const float* x = static_cast<const float*>(in[0].data);
  int* y = x;
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  (void)out;
  return 0;
}
