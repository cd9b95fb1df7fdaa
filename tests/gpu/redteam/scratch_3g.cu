// anvil-expect: pass
// anvil-about: a correct ReLU that holds 3 GiB of device scratch and says so when the device cannot give it: honest,
// anvil-about: and the device-memory hog test's candidate whose own run fails for the hog (tests/gpu/test_gpu_device_hog.py)
#include <cstdint>

#include <cuda_runtime.h>

#include "anvil/native.h"

namespace {

const char* g_error = nullptr;
void* g_scratch = nullptr;  // Held for the whole run.

__global__ void ReluKernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    y[i] = fmaxf(x[i], 0.0f);
  }
}

}  // namespace

ANVIL_EXPORT const char* anvil_last_error(void) { return g_error; }

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out,
                               void* stream) {
  if (g_scratch == nullptr) {
    size_t bytes = size_t{3} << 30;
    cudaError_t err = cudaMalloc(&g_scratch, bytes);
    if (err == cudaSuccess) err = cudaMemset(g_scratch, 1, bytes);
    if (err != cudaSuccess) {
      g_scratch = nullptr;
      g_error = cudaGetErrorString(err);  // "out of memory"
      return 5;
    }
    cudaDeviceSynchronize();
  }
  if (n_in != 1 || n_out != 1) return 1;
  if (in[0].dtype != ANVIL_FLOAT32 || out[0].dtype != ANVIL_FLOAT32) return 2;
  const int64_t n = anvil_numel(&in[0]);
  if (anvil_numel(&out[0]) != n) return 3;
  if (n == 0) return 0;
  constexpr int kThreads = 256;
  const int64_t wanted = (n + kThreads - 1) / kThreads;
  const unsigned blocks = static_cast<unsigned>(wanted < 65535 ? wanted : 65535);  // grid-stride loop covers the rest
  ReluKernel<<<blocks, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<const float*>(in[0].data), static_cast<float*>(out[0].data), n);
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) {
    g_error = cudaGetErrorString(err);
    return 4;
  }
  return 0;
}
