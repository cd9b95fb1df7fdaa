// anvil-expect: pass
// anvil-about: an honest ReLU whose library carries a 40 MiB table: its build is written in memory, so a nearly
// anvil-about: full disk cannot fail the compile (once, compile_error); only anvil's copy into the cache meets it
#include <cstdint>

#include "anvil/native.h"

// Kept in the library whatever the optimizer thinks of it.
__attribute__((used)) static const unsigned char kTable[40 << 20] = {1};

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void* /*stream*/) {
  if (n_in != 1 || n_out != 1) return 1;
  if (in[0].dtype != ANVIL_FLOAT32 || out[0].dtype != ANVIL_FLOAT32) return 2;
  const int64_t n = anvil_numel(&in[0]);
  if (anvil_numel(&out[0]) != n) return 3;
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  return 0;
}
