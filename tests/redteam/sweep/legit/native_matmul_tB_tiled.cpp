// anvil-expect: pass
// anvil-class: legit
// anvil-task: l1_17_matmul_tB.py
// anvil-about: native A @ B^T: anonymous namespace, templates with constexpr tile sizes, std::fill,
// anvil-about: OpenMP (the native build has -fopenmp), anvil_last_error with a static message buffer.
#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "anvil/native.h"

namespace {

char g_error[256] = "";

template <int64_t TI, int64_t TJ>
void GemmTB(const float* a, const float* b, float* c, int64_t M, int64_t N, int64_t K) {
  static_assert(TI > 0 && TJ > 0, "tiles must be positive");
#pragma omp parallel for schedule(static)
  for (int64_t i0 = 0; i0 < M; i0 += TI) {
    for (int64_t j0 = 0; j0 < N; j0 += TJ) {
      const int64_t i1 = std::min(i0 + TI, M), j1 = std::min(j0 + TJ, N);
      for (int64_t i = i0; i < i1; ++i) {
        for (int64_t j = j0; j < j1; ++j) {
          float acc = 0.0f;
          for (int64_t k = 0; k < K; ++k) acc += a[i * K + k] * b[j * K + k];
          c[i * N + j] = acc;
        }
      }
    }
  }
}

}  // namespace

ANVIL_EXPORT const char* anvil_last_error(void) { return g_error; }

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void*) {
  if (n_in != 2 || n_out != 1) {
    std::snprintf(g_error, sizeof g_error, "expected 2 inputs and 1 output, got %d and %d", n_in, n_out);
    return 1;
  }
  const anvil_tensor& A = in[0];
  const anvil_tensor& B = in[1];
  if (A.dtype != ANVIL_FLOAT32 || B.dtype != ANVIL_FLOAT32 || A.ndim != 2 || B.ndim != 2 || A.shape[1] != B.shape[1]) {
    std::snprintf(g_error, sizeof g_error, "bad inputs");
    return 2;
  }
  const int64_t M = A.shape[0], K = A.shape[1], N = B.shape[0];
  float* c = static_cast<float*>(out[0].data);
  std::fill(c, c + M * N, 0.0f);
  GemmTB<16, 16>(static_cast<const float*>(A.data), static_cast<const float*>(B.data), c, M, N, K);
  return 0;
}
