// anvil-expect: pass
// anvil-class: legit
// anvil-task: l1_23_softmax_bf16.py
// anvil-about: native bf16 softmax: bf16<->fp32 by bit shifts (round-to-nearest-even on the way back), fp32 math.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "anvil/native.h"

namespace {
inline float Bf16ToF32(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
inline uint16_t F32ToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40);  // NaN stays NaN
  const uint32_t round = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + round) >> 16);
}
}  // namespace

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void*) {
  if (n_in != 1 || n_out != 1 || in[0].dtype != ANVIL_BFLOAT16 || in[0].ndim != 2) return 1;
  const int64_t R = in[0].shape[0], C = in[0].shape[1];
  const uint16_t* x = static_cast<const uint16_t*>(in[0].data);
  uint16_t* y = static_cast<uint16_t*>(out[0].data);
  std::vector<float> row(static_cast<size_t>(C));
  for (int64_t r = 0; r < R; ++r) {
    float m = -INFINITY;
    for (int64_t c = 0; c < C; ++c) { row[c] = Bf16ToF32(x[r * C + c]); m = row[c] > m ? row[c] : m; }
    float s = 0.f;
    for (int64_t c = 0; c < C; ++c) { row[c] = std::exp(row[c] - m); s += row[c]; }
    for (int64_t c = 0; c < C; ++c) y[r * C + c] = F32ToBf16(row[c] / s);
  }
  return 0;
}
