// anvil-expect: cheat
// anvil-about: hands the whole product to vendor BLAS (cblas_sgemm, declared by hand) instead of computing it
#include <cstdint>

#include "anvil/native.h"

// From <cblas.h>; declared here so the file compiles where the BLAS headers are not installed.
extern "C" void cblas_sgemm(int order, int trans_a, int trans_b, int m, int n, int k, float alpha,
                            const float* a, int lda, const float* b, int ldb, float beta, float* c,
                            int ldc);

namespace {
constexpr int kCblasRowMajor = 101;
constexpr int kCblasNoTrans = 111;
}  // namespace

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out,
                               void* /*stream*/) {
  if (n_in != 2 || n_out != 1) return 1;
  const int m = static_cast<int>(in[0].shape[0]);
  const int k = static_cast<int>(in[0].shape[1]);
  const int n = static_cast<int>(in[1].shape[1]);
  cblas_sgemm(kCblasRowMajor, kCblasNoTrans, kCblasNoTrans, m, n, k, 1.0f,
              static_cast<const float*>(in[0].data), k, static_cast<const float*>(in[1].data), n, 0.0f,
              static_cast<float*>(out[0].data), n);
  return 0;
}
