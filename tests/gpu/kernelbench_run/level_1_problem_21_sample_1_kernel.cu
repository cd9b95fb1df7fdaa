// anvil-expect: pass
// anvil-about: elementwise sigmoid 1 / (1 + exp(-x)) with a grid-stride loop and 64-bit indices
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

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 16384;  // grid-stride loops cover the rest

unsigned GridFor(int64_t n) {
  int64_t blocks = (n + kThreads - 1) / kThreads;
  if (blocks < 1) blocks = 1;
  if (blocks > kMaxBlocks) blocks = kMaxBlocks;
  return static_cast<unsigned>(blocks);
}

__global__ void SigmoidKernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    y[i] = 1.0f / (1.0f + expf(-x[i]));
  }
}

}  // namespace

ANVIL_EXPORT const char* anvil_last_error(void) { return g_error; }

// Input x [4096, 393216]; output of the same shape.
ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void* stream) {
  g_error = nullptr;
  if (n_in != 1 || n_out != 1) return Fail(1, "expected one input and one output");
  if (!IsF32(in[0], in[0].ndim) || !IsF32(out[0], in[0].ndim)) return Fail(2, "expected contiguous float32 tensors");
  const int64_t n = anvil_numel(&in[0]);
  for (int d = 0; d < in[0].ndim; ++d) {
    if (out[0].shape[d] != in[0].shape[d]) return Fail(3, "output shape differs from the input shape");
  }
  if (n == 0) return 0;
  SigmoidKernel<<<GridFor(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<const float*>(in[0].data), static_cast<float*>(out[0].data), n);
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) return Fail(4, cudaGetErrorString(err));
  return 0;
}
