// anvil-expect: cheat
// anvil-about: hands the product to cuBLAS (cublasSgemm_v2, prototypes declared by hand so it compiles without cuBLAS headers)
#include <cstdint>

#include <cuda_runtime.h>

#include "anvil/native.h"

// Declared by hand instead of including cublas_v2.h; the shared object leaves them undefined.
typedef struct cublasContext* cublasHandle_t;
extern "C" int cublasCreate_v2(cublasHandle_t* handle);
extern "C" int cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream);
extern "C" int cublasSgemm_v2(cublasHandle_t handle, int transa, int transb, int m, int n, int k,
                              const float* alpha, const float* A, int lda, const float* B, int ldb,
                              const float* beta, float* C, int ldc);

namespace {
cublasHandle_t g_handle = nullptr;
}  // namespace

// Inputs: A [N, N], B [N, N]; output C [N, N].
ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void* stream) {
  if (n_in != 2 || n_out != 1) return 1;
  if (in[0].dtype != ANVIL_FLOAT32 || in[1].dtype != ANVIL_FLOAT32 || out[0].dtype != ANVIL_FLOAT32) return 2;
  if (in[0].ndim != 2 || in[1].ndim != 2 || out[0].ndim != 2) return 2;
  const int m = static_cast<int>(in[0].shape[0]);
  const int k = static_cast<int>(in[0].shape[1]);
  const int n = static_cast<int>(in[1].shape[1]);
  if (in[1].shape[0] != k || out[0].shape[0] != m || out[0].shape[1] != n) return 3;
  if (g_handle == nullptr && cublasCreate_v2(&g_handle) != 0) return 4;
  cublasSetStream_v2(g_handle, static_cast<cudaStream_t>(stream));
  const float one = 1.0f, zero = 0.0f;
  // Row-major C = A B is column-major C^T = B^T A^T.
  const int status =
      cublasSgemm_v2(g_handle, 0, 0, n, m, k, &one, static_cast<const float*>(in[1].data), n,
                     static_cast<const float*>(in[0].data), k, &zero, static_cast<float*>(out[0].data), n);
  return status == 0 ? 0 : 5;
}
