// anvil-expect: pass
// anvil-about: row-wise softmax over dim 1 of a 2-D tensor, subtracting the row max first
#include <cmath>
#include <cstdint>

#include "anvil/native.h"

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out,
                               void* /*stream*/) {
  if (n_in != 1 || n_out != 1) return 1;
  if (in[0].dtype != ANVIL_FLOAT32 || out[0].dtype != ANVIL_FLOAT32) return 2;
  if (in[0].ndim != 2 || out[0].ndim != 2) return 3;
  const int64_t rows = in[0].shape[0], cols = in[0].shape[1];
  if (out[0].shape[0] != rows || out[0].shape[1] != cols) return 4;
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float max = -INFINITY;
    for (int64_t c = 0; c < cols; ++c) max = xr[c] > max ? xr[c] : max;
    float sum = 0.0f;
    for (int64_t c = 0; c < cols; ++c) {
      yr[c] = std::exp(xr[c] - max);
      sum += yr[c];
    }
    const float inv = 1.0f / sum;
    for (int64_t c = 0; c < cols; ++c) yr[c] *= inv;
  }
  return 0;
}
