// anvil-expect: runtime_error
// anvil-about: rejects its input and returns a non-zero code, with a message from anvil_last_error
#include <cstdint>

#include "anvil/native.h"

namespace {
const char* g_last_error = nullptr;
}  // namespace

ANVIL_EXPORT const char* anvil_last_error(void) { return g_last_error; }

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out,
                               void* /*stream*/) {
  if (n_in != 1 || n_out != 1) {
    g_last_error = "expected one input and one output";
    return 1;
  }
  // Written for float64 by mistake, so it refuses the task's float32 input.
  if (in[0].dtype != ANVIL_FLOAT64) {
    g_last_error = "relu kernel expects a float64 input";
    return 7;
  }
  const int64_t n = anvil_numel(&in[0]);
  const double* x = static_cast<const double*>(in[0].data);
  double* y = static_cast<double*>(out[0].data);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0 ? x[i] : 0.0;
  return 0;
}
