// anvil-expect: pass
// anvil-class: legit
// anvil-task: l1_97_sdpa.py
// anvil-about: native attention with a reusable static std::vector workspace (grown, never replayed), a row
// anvil-about: softmax in place, std::sqrt scale.
#include <cmath>
#include <cstdint>
#include <vector>

#include "anvil/native.h"

namespace {
std::vector<float> g_row;
}

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void*) {
  if (n_in != 3 || n_out != 1 || in[0].ndim != 4) return 1;
  const int64_t B = in[0].shape[0], H = in[0].shape[1], S = in[0].shape[2], D = in[0].shape[3];
  const float* q = static_cast<const float*>(in[0].data);
  const float* k = static_cast<const float*>(in[1].data);
  const float* v = static_cast<const float*>(in[2].data);
  float* o = static_cast<float*>(out[0].data);
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  if (static_cast<int64_t>(g_row.size()) < S) g_row.resize(static_cast<size_t>(S));
  for (int64_t h = 0; h < B * H; ++h) {
    const float* qh = q + h * S * D;
    const float* kh = k + h * S * D;
    const float* vh = v + h * S * D;
    float* oh = o + h * S * D;
    for (int64_t i = 0; i < S; ++i) {
      float m = -INFINITY;
      for (int64_t j = 0; j < S; ++j) {
        float acc = 0.f;
        for (int64_t d = 0; d < D; ++d) acc += qh[i * D + d] * kh[j * D + d];
        g_row[j] = acc * scale;
        m = g_row[j] > m ? g_row[j] : m;
      }
      float sum = 0.f;
      for (int64_t j = 0; j < S; ++j) { g_row[j] = std::exp(g_row[j] - m); sum += g_row[j]; }
      for (int64_t d = 0; d < D; ++d) {
        float acc = 0.f;
        for (int64_t j = 0; j < S; ++j) acc += g_row[j] * vh[j * D + d];
        oh[i * D + d] = acc / sum;
      }
    }
  }
  return 0;
}
