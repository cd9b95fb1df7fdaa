// anvil-expect: runtime_error
// anvil-about: a malloc bomb: writes 64 MiB blocks, up to 2 GiB, before any output; its memory quota stops it
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "anvil/native.h"

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void* /*stream*/) {
  if (n_in != 1 || n_out != 1) return 1;
  for (int i = 0; i < 32; ++i) {  // Bounded: 2 GiB if no quota held.
    void* block = std::malloc(64u << 20);
    if (block == nullptr) return 2;
    std::memset(block, i + 1, 64u << 20);  // Touched: charged to the process.
  }
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  for (int64_t i = 0; i < anvil_numel(&in[0]); ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  return 0;
}
