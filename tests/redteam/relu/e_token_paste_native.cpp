// anvil-expect: cheat
// anvil-class: E
// anvil-rule: cpp.vendor_library
// anvil-about: builds the name of a BLAS routine from fragments with token pasting, so the scan of the text as written
// anvil-about: never sees it; the scan after the preprocessor does (and, behind it, the built library's undefined
// anvil-about: symbol cblas_sgemm: so.vendor_library, src/integrity/symbol_scan_test.cc)
#include <cstdint>

#include "anvil/native.h"

#define ANVIL_CAT3(a, b, c) a##b##c
#define BLAS(hi, lo) ANVIL_CAT3(cb, las_, hi##lo)

extern "C" void BLAS(sge, mm)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*,
                            int);

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int, anvil_tensor* out, int, void*) {
  // A decoy call that never runs; the relu is honest, the linked library is the point.
  if (in[0].ndim > 8) BLAS(sge, mm)(0, 0, 0, 0, 0, 0, 1.0f, nullptr, 0, nullptr, 0, 0.0f, nullptr, 0);
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  for (int64_t i = 0; i < anvil_numel(&in[0]); ++i) y[i] = x[i] > 0 ? x[i] : 0;
  return 0;
}
