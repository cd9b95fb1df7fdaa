// anvil-expect: pass
// anvil-class: legit
// anvil-task: l1_24_logsoftmax.py
// anvil-about: native log_softmax: std::max_element, std::accumulate with a lambda, std::vector row buffer,
// anvil-about: static helper, <cmath> expf/logf.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "anvil/native.h"

static void LogSoftmaxRow(const float* x, float* y, int64_t n, std::vector<float>& tmp) {
  const float m = *std::max_element(x, x + n);
  tmp.resize(static_cast<size_t>(n));
  std::transform(x, x + n, tmp.begin(), [m](float v) { return expf(v - m); });
  const double s = std::accumulate(tmp.begin(), tmp.end(), 0.0, [](double acc, float v) { return acc + v; });
  const float lse = m + static_cast<float>(std::log(s));
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] - lse;
}

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void*) {
  if (n_in != 1 || n_out != 1 || in[0].ndim != 2 || in[0].dtype != ANVIL_FLOAT32) return 1;
  const int64_t rows = in[0].shape[0], cols = in[0].shape[1];
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  std::vector<float> tmp;
  for (int64_t r = 0; r < rows; ++r) LogSoftmaxRow(x + r * cols, y + r * cols, cols, tmp);
  return 0;
}
