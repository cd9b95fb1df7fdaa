// anvil-expect: wrong_answer
// anvil-class: B5
// anvil-about: input mutation: zeroes its input and returns zeros, so a reference run after it on the same tensors would agree
#include <cstdint>
#include <cstring>

#include "anvil/native.h"

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int, anvil_tensor* out, int, void*) {
  const int64_t n = anvil_numel(&in[0]);
  std::memset(in[0].data, 0, n * sizeof(float));
  std::memset(out[0].data, 0, n * sizeof(float));
  return 0;
}
