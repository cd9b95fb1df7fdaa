// anvil-expect: pass
// anvil-about: sum over dim 1 with keepdim; the reduced dim (an init input) is hard-coded, as the ABI requires
#include <cstdint>

#include "anvil/native.h"

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out,
                               void* /*stream*/) {
  if (n_in != 1 || n_out != 1) return 1;
  const anvil_tensor& x = in[0];
  const anvil_tensor& y = out[0];
  if (x.dtype != ANVIL_FLOAT32 || y.dtype != ANVIL_FLOAT32) return 2;
  // x is [B, R, C]; y is [B, 1, C].
  if (x.ndim != 3 || y.ndim != 3) return 3;
  const int64_t batch = x.shape[0], rows = x.shape[1], cols = x.shape[2];
  if (y.shape[0] != batch || y.shape[1] != 1 || y.shape[2] != cols) return 4;
  const float* src = static_cast<const float*>(x.data);
  float* dst = static_cast<float*>(y.data);
#pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t c = 0; c < cols; ++c) {
      double acc = 0.0;  // wider accumulator: the reference sums pairwise, so stay within tolerance
      for (int64_t r = 0; r < rows; ++r) acc += src[(b * rows + r) * cols + c];
      dst[b * cols + c] = static_cast<float>(acc);
    }
  }
  return 0;
}
