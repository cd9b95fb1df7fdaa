// anvil-expect: compile_error
// anvil-about: a compiler bomb: the preprocessor expands a table of a million zeros, which g++ then has to hold
// anvil-about: (530 MiB at its peak where no quota holds; 32 MiB for the honest relu); its memory quota stops it
#include <cstdint>

#include "anvil/native.h"

#define Z0 0,
#define Z1 Z0 Z0 Z0 Z0 Z0 Z0 Z0 Z0 Z0 Z0
#define Z2 Z1 Z1 Z1 Z1 Z1 Z1 Z1 Z1 Z1 Z1
#define Z3 Z2 Z2 Z2 Z2 Z2 Z2 Z2 Z2 Z2 Z2
#define Z4 Z3 Z3 Z3 Z3 Z3 Z3 Z3 Z3 Z3 Z3
#define Z5 Z4 Z4 Z4 Z4 Z4 Z4 Z4 Z4 Z4 Z4
#define Z6 Z5 Z5 Z5 Z5 Z5 Z5 Z5 Z5 Z5 Z5

static const float kTable[] = {Z6 0};

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void* /*stream*/) {
  if (n_in != 1 || n_out != 1) return 1;
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  for (int64_t i = 0; i < anvil_numel(&in[0]); ++i) y[i] = (x[i] > 0.0f ? x[i] : 0.0f) + kTable[i];
  return 0;
}
