// anvil-expect: pass
// anvil-about: softmax over dim 1 of a 2-D input: one 1024-thread block per row, online max/sum pass then a normalize pass
#include <cmath>
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

constexpr int kSoftmaxThreads = 1024;

// Merges the running (max, sum of exp(x - max)) pair (m2, s2) into (m, s).
__device__ __forceinline__ void MergeMaxSum(float& m, float& s, float m2, float s2) {
  if (m2 == -INFINITY) return;
  if (m == -INFINITY) {
    m = m2;
    s = s2;
  } else if (m2 > m) {
    s = s * expf(m - m2) + s2;
    m = m2;
  } else {
    s += s2 * expf(m2 - m);
  }
}

// One block per row: an online (max, sum) pass, then y = exp(x - max) / sum. Row offsets are 64-bit.
__global__ void __launch_bounds__(kSoftmaxThreads)
    SoftmaxRowsKernel(const float* __restrict__ x, float* __restrict__ y, int64_t cols) {
  __shared__ float warp_m[32];
  __shared__ float warp_s[32];
  const int64_t base = static_cast<int64_t>(blockIdx.x) * cols;
  const float* xr = x + base;
  float* yr = y + base;
  float m = -INFINITY;
  float s = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += kSoftmaxThreads) MergeMaxSum(m, s, xr[c], 1.0f);
  for (int off = 16; off > 0; off >>= 1) {
    const float m2 = __shfl_down_sync(0xffffffffu, m, off);
    const float s2 = __shfl_down_sync(0xffffffffu, s, off);
    MergeMaxSum(m, s, m2, s2);
  }
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  if (lane == 0) {
    warp_m[warp] = m;
    warp_s[warp] = s;
  }
  __syncthreads();
  if (warp == 0) {
    m = warp_m[lane];
    s = warp_s[lane];
    for (int off = 16; off > 0; off >>= 1) {
      const float m2 = __shfl_down_sync(0xffffffffu, m, off);
      const float s2 = __shfl_down_sync(0xffffffffu, s, off);
      MergeMaxSum(m, s, m2, s2);
    }
    if (lane == 0) {
      warp_m[0] = m;
      warp_s[0] = s;
    }
  }
  __syncthreads();
  const float row_max = warp_m[0];
  const float row_sum = warp_s[0];
  for (int64_t c = threadIdx.x; c < cols; c += kSoftmaxThreads) yr[c] = expf(xr[c] - row_max) / row_sum;
}

}  // namespace

ANVIL_EXPORT const char* anvil_last_error(void) { return g_error; }

// Input x [rows, cols] (KernelBench: 4096 x 393216); output of the same shape, softmax over dim 1.
ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void* stream) {
  g_error = nullptr;
  if (n_in != 1 || n_out != 1) return Fail(1, "expected one input and one output");
  if (!IsF32(in[0], 2) || !IsF32(out[0], 2)) return Fail(2, "expected contiguous 2-D float32 tensors");
  const int64_t rows = in[0].shape[0], cols = in[0].shape[1];
  if (out[0].shape[0] != rows || out[0].shape[1] != cols) return Fail(3, "output shape differs from the input shape");
  if (rows == 0 || cols == 0) return 0;
  if (rows > 2147483647LL) return Fail(3, "too many rows for one block per row");
  SoftmaxRowsKernel<<<static_cast<unsigned>(rows), kSoftmaxThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<const float*>(in[0].data), static_cast<float*>(out[0].data), cols);
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) return Fail(4, cudaGetErrorString(err));
  return 0;
}
