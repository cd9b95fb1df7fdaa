// anvil-expect: wrong_answer
// anvil-task: wide_softmax.py
// anvil-about: writes 1/columns everywhere, the mean of a softmax row: within fp32's atol of every output
#include <cstdint>

#include "anvil/native.h"

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void* /*stream*/) {
  if (n_in != 1 || n_out != 1 || out[0].dtype != ANVIL_FLOAT32 || out[0].ndim != 2) return 1;
  const int64_t rows = out[0].shape[0], cols = out[0].shape[1];
  float* y = static_cast<float*>(out[0].data);
  for (int64_t i = 0; i < rows * cols; ++i) y[i] = 1.0f / static_cast<float>(cols);
  return 0;
}
