#include <cuda_runtime.h>

#include <cstdint>

#include "anvil/native.h"

// relu(a + b), one element per thread.
__global__ void add_relu_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out,
                                int64_t n) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = fmaxf(a[i] + b[i], 0.0f);
}

// in[0] = a, in[1] = b, out[0] = the result; float32, contiguous, on the device.
ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void* stream) {
  if (n_in != 2 || n_out != 1) return 1;
  if (in[0].dtype != ANVIL_FLOAT32 || in[1].dtype != ANVIL_FLOAT32 || out[0].dtype != ANVIL_FLOAT32) return 2;
  const int64_t n = anvil_numel(&out[0]);
  const int threads = 256;
  const int64_t blocks = (n + threads - 1) / threads;
  add_relu_kernel<<<blocks, threads, 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<const float*>(in[0].data), static_cast<const float*>(in[1].data), static_cast<float*>(out[0].data),
      n);
  return cudaGetLastError() == cudaSuccess ? 0 : 3;
}
