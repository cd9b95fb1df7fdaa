// anvil-expect: wrong_answer
// anvil-class: A5
// anvil-about: precision downgrade: rounds every value through half precision (passes a 1e-2 tolerance, not fp32's 1e-4)
#include <cstdint>
#include <cstring>

#include "anvil/native.h"

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int, anvil_tensor* out, int, void*) {
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  for (int64_t i = 0; i < anvil_numel(&in[0]); ++i) {
    const _Float16 h = static_cast<_Float16>(x[i] > 0 ? x[i] : 0);
    y[i] = static_cast<float>(h);
  }
  return 0;
}
