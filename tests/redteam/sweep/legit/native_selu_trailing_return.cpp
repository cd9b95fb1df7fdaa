// anvil-expect: pass
// anvil-class: legit
// anvil-task: l1_27_selu.py
// anvil-about: native SELU: a constexpr struct whose member uses a trailing return type
// anvil-about: (`auto elu(float v) const -> float {`), called act.elu(v); OpenMP simd.
#include <cmath>
#include <cstdint>

#include "anvil/native.h"

namespace {

struct Selu {
  static constexpr float kAlpha = 1.6732632423543772f;
  static constexpr float kScale = 1.0507009873554805f;
  auto elu(float v) const -> float { return v > 0.f ? v : kAlpha * std::expm1(v); }
};

}  // namespace

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void*) {
  if (n_in != 1 || n_out != 1 || in[0].dtype != ANVIL_FLOAT32) return 1;
  const int64_t n = anvil_numel(&in[0]);
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  const Selu act;
#pragma omp parallel for simd
  for (int64_t i = 0; i < n; ++i) y[i] = Selu::kScale * act.elu(x[i]);
  return 0;
}
