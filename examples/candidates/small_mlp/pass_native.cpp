// anvil-expect: pass
// anvil-about: fused MLP; inputs are x then fc1.weight, fc1.bias, fc2.weight, fc2.bias (named_parameters order)
#include <cstdint>
#include <vector>

#include "anvil/native.h"

namespace {

// y[b, o] = sum_i x[b, i] * w[o, i] + bias[o], optionally followed by ReLU (nn.Linear layout).
void Linear(const float* x, const float* w, const float* bias, float* y, int64_t batch, int64_t in_f,
            int64_t out_f, bool relu) {
#pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t o = 0; o < out_f; ++o) {
      float acc = bias[o];
      for (int64_t i = 0; i < in_f; ++i) acc += x[b * in_f + i] * w[o * in_f + i];
      y[b * out_f + o] = relu && acc < 0.0f ? 0.0f : acc;
    }
  }
}

}  // namespace

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out,
                               void* /*stream*/) {
  if (n_in != 5 || n_out != 1) return 1;
  for (int i = 0; i < n_in; ++i)
    if (in[i].dtype != ANVIL_FLOAT32) return 2;
  if (out[0].dtype != ANVIL_FLOAT32) return 2;
  const anvil_tensor& x = in[0];
  const anvil_tensor& w1 = in[1];  // fc1.weight [hidden, input]
  const anvil_tensor& b1 = in[2];  // fc1.bias   [hidden]
  const anvil_tensor& w2 = in[3];  // fc2.weight [output, hidden]
  const anvil_tensor& b2 = in[4];  // fc2.bias   [output]
  if (x.ndim != 2 || w1.ndim != 2 || b1.ndim != 1 || w2.ndim != 2 || b2.ndim != 1 || out[0].ndim != 2)
    return 3;
  const int64_t batch = x.shape[0], in_f = x.shape[1], hidden = w1.shape[0], out_f = w2.shape[0];
  if (w1.shape[1] != in_f || b1.shape[0] != hidden || w2.shape[1] != hidden || b2.shape[0] != out_f ||
      out[0].shape[0] != batch || out[0].shape[1] != out_f)
    return 4;
  std::vector<float> h(static_cast<size_t>(batch * hidden));
  Linear(static_cast<const float*>(x.data), static_cast<const float*>(w1.data),
         static_cast<const float*>(b1.data), h.data(), batch, in_f, hidden, /*relu=*/true);
  Linear(h.data(), static_cast<const float*>(w2.data), static_cast<const float*>(b2.data),
         static_cast<float*>(out[0].data), batch, hidden, out_f, /*relu=*/false);
  return 0;
}
