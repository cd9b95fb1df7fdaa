// anvil-expect: pass
// anvil-class: legit
// anvil-task: l3_3_deepnarrowmlp.py
// anvil-about: native deep MLP: x then (weight, bias) x5 in named_parameters order; ping-pong std::vector
// anvil-about: workspaces, ReLU on all but the last layer.
#include <cstdint>
#include <vector>

#include "anvil/native.h"

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void*) {
  if (n_out != 1 || n_in < 3 || (n_in - 1) % 2 != 0) return 1;
  const int layers = (n_in - 1) / 2;
  const int64_t B = in[0].shape[0];
  std::vector<float> cur(static_cast<const float*>(in[0].data),
                         static_cast<const float*>(in[0].data) + B * in[0].shape[1]);
  std::vector<float> next;
  int64_t width = in[0].shape[1];
  for (int l = 0; l < layers; ++l) {
    const anvil_tensor& w = in[1 + 2 * l];
    const anvil_tensor& b = in[2 + 2 * l];
    const int64_t O = w.shape[0], I = w.shape[1];
    if (I != width) return 2;
    const float* pw = static_cast<const float*>(w.data);
    const float* pb = static_cast<const float*>(b.data);
    const bool last = l == layers - 1;
    float* dst = nullptr;
    if (last) {
      dst = static_cast<float*>(out[0].data);
    } else {
      next.assign(static_cast<size_t>(B * O), 0.f);
      dst = next.data();
    }
    for (int64_t r = 0; r < B; ++r)
      for (int64_t o = 0; o < O; ++o) {
        float acc = pb[o];
        for (int64_t i = 0; i < I; ++i) acc += cur[r * I + i] * pw[o * I + i];
        dst[r * O + o] = (!last && acc < 0.f) ? 0.f : acc;
      }
    if (!last) cur.swap(next);
    width = O;
  }
  return 0;
}
