// anvil-expect: wrong_answer
// anvil-task: wide_softmax.py
// anvil-about: writes zeros: every output of the task is under fp32's atol, so zeros were once within tolerance
#include <cstdint>
#include <cstring>

#include "anvil/native.h"

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void* /*stream*/) {
  if (n_in != 1 || n_out != 1 || out[0].dtype != ANVIL_FLOAT32) return 1;
  int64_t n = 1;
  for (int d = 0; d < out[0].ndim; ++d) n *= out[0].shape[d];
  std::memset(out[0].data, 0, static_cast<size_t>(n) * sizeof(float));
  return 0;
}
