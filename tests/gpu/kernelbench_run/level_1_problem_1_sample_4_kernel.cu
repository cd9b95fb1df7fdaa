// anvil-expect: compile_error
// anvil-about: passes the read-only input pointer where the kernel expects its float* output (const float* -> float*)
#include <cstdint>

#include <cuda_runtime.h>

#include "anvil/native.h"

namespace {

// One thread per output element: C[row, col] = sum_k A[row, k] * B[k, col].
__global__ void NaiveMatmul(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                            int64_t n) {
  const int64_t row = static_cast<int64_t>(blockIdx.y) * blockDim.y + threadIdx.y;
  const int64_t col = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= n || col >= n) return;
  float acc = 0.0f;
  for (int64_t k = 0; k < n; ++k) acc = fmaf(A[row * n + k], B[k * n + col], acc);
  C[row * n + col] = acc;
}

}  // namespace

// Inputs: A [N, N], B [N, N]; output C [N, N].
ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void* stream) {
  if (n_in != 2 || n_out != 1) return 1;
  if (in[0].dtype != ANVIL_FLOAT32 || in[1].dtype != ANVIL_FLOAT32 || out[0].dtype != ANVIL_FLOAT32) return 2;
  if (in[0].ndim != 2 || in[0].shape[0] != in[0].shape[1]) return 3;
  const int64_t n = in[0].shape[0];
  const float* a = static_cast<const float*>(in[0].data);
  const float* b = static_cast<const float*>(in[1].data);
  const float* c = static_cast<const float*>(out[0].data);  // bug: the output must not be const
  const dim3 block(16, 16);
  const dim3 grid(static_cast<unsigned>((n + 15) / 16), static_cast<unsigned>((n + 15) / 16));
  NaiveMatmul<<<grid, block, 0, static_cast<cudaStream_t>(stream)>>>(a, b, c, n);
  return cudaGetLastError() == cudaSuccess ? 0 : 4;
}
