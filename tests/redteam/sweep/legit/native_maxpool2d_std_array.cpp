// anvil-expect: pass
// anvil-class: legit
// anvil-task: l1_42_maxpool2d.py
// anvil-about: native MaxPool2d (k=4, s=1, p=1, d=1 from the task's init arguments) with a constexpr std::array of
// anvil-about: the pooling parameters, std::max, std::numeric_limits<float>::lowest().
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>

#include "anvil/native.h"

namespace {
constexpr std::array<int64_t, 4> kPool = {4, 1, 1, 1};  // kernel, stride, padding, dilation
}

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void*) {
  if (n_in != 1 || n_out != 1 || in[0].ndim != 4) return 1;
  const auto [K, S, P, D] = kPool;
  const int64_t N = in[0].shape[0], C = in[0].shape[1], H = in[0].shape[2], W = in[0].shape[3];
  const int64_t OH = out[0].shape[2], OW = out[0].shape[3];
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  for (int64_t pl = 0; pl < N * C; ++pl)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        float m = std::numeric_limits<float>::lowest();
        for (int64_t i = 0; i < K; ++i)
          for (int64_t j = 0; j < K; ++j) {
            const int64_t ih = oh * S - P + i * D, iw = ow * S - P + j * D;
            if (ih >= 0 && ih < H && iw >= 0 && iw < W) m = std::max(m, x[(pl * H + ih) * W + iw]);
          }
        y[(pl * OH + oh) * OW + ow] = m;
      }
  return 0;
}
