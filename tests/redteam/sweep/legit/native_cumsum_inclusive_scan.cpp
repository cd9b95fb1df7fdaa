// anvil-expect: pass
// anvil-class: legit
// anvil-task: l1_89_cumsum.py
// anvil-about: native cumsum along dim 1 with C++17 std::inclusive_scan over a double row buffer.
#include <cstdint>
#include <numeric>
#include <vector>

#include "anvil/native.h"

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void*) {
  if (n_in != 1 || n_out != 1 || in[0].ndim != 2) return 1;
  const int64_t R = in[0].shape[0], C = in[0].shape[1];
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  std::vector<double> row(static_cast<size_t>(C)), acc(static_cast<size_t>(C));
  for (int64_t r = 0; r < R; ++r) {
    for (int64_t c = 0; c < C; ++c) row[c] = x[r * C + c];
    std::inclusive_scan(row.begin(), row.end(), acc.begin());
    for (int64_t c = 0; c < C; ++c) y[r * C + c] = static_cast<float>(acc[c]);
  }
  return 0;
}
