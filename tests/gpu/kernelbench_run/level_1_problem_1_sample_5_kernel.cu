// anvil-expect: runtime_error
// anvil-about: matmul whose store index is offset 2^38 floats (1 TiB) past C: an illegal-address CUDA fault at the first store
#include <cstdint>

#include <cuda_runtime.h>

#include "anvil/native.h"

namespace {

const char* g_error = nullptr;

int Fail(int code, const char* message) {
  g_error = message;
  return code;
}

// A contiguous float32 tensor of the given rank with data behind it.
bool IsF32(const anvil_tensor& t, int ndim) {
  return t.dtype == ANVIL_FLOAT32 && t.ndim == ndim && anvil_is_contiguous(&t) != 0 &&
         (anvil_numel(&t) == 0 || t.data != nullptr);
}

// Bug: the store goes to C + row * n + col + kFar instead of C + row * n + col, far outside any allocation.
constexpr int64_t kFar = int64_t{1} << 38;

// One thread per output element: C[row, col] = sum_k A[row, k] * B[k, col].
__global__ void NaiveMatmul(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                            int64_t n) {
  const int64_t row = static_cast<int64_t>(blockIdx.y) * blockDim.y + threadIdx.y;
  const int64_t col = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= n || col >= n) return;
  float acc = 0.0f;
  for (int64_t k = 0; k < n; ++k) acc = fmaf(A[row * n + k], B[k * n + col], acc);
  C[row * n + col + kFar] = acc;
}

}  // namespace

ANVIL_EXPORT const char* anvil_last_error(void) { return g_error; }

// Inputs: A [N, N], B [N, N]; output C [N, N].
ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void* stream) {
  g_error = nullptr;
  if (n_in != 2 || n_out != 1) return Fail(1, "expected inputs A, B and one output");
  const anvil_tensor& a = in[0];
  const anvil_tensor& b = in[1];
  anvil_tensor& c = out[0];
  if (!IsF32(a, 2) || !IsF32(b, 2) || !IsF32(c, 2)) return Fail(2, "expected contiguous 2-D float32 tensors");
  const int64_t n = a.shape[0];
  if (a.shape[1] != n || b.shape[0] != n || b.shape[1] != n || c.shape[0] != n || c.shape[1] != n) {
    return Fail(3, "expected square matrices of one size");
  }
  if (n == 0) return 0;
  if ((n + 15) / 16 > 65535) return Fail(3, "matrix too large for the 2-D grid");
  const dim3 block(16, 16);
  const dim3 grid(static_cast<unsigned>((n + 15) / 16), static_cast<unsigned>((n + 15) / 16));
  NaiveMatmul<<<grid, block, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<const float*>(a.data),
                                                                      static_cast<const float*>(b.data),
                                                                      static_cast<float*>(c.data), n);
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) return Fail(4, cudaGetErrorString(err));
  return 0;  // the fault surfaces when the harness synchronizes the stream
}
