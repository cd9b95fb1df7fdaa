// anvil-expect: wrong_answer
// anvil-about: off-by-one in the reduction loop (r < R - 1): every sum misses its last row
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

// out[o, 0, i] = sum_r x[o, r, i] for x viewed as [outer, R, inner]: one thread per output element, reading
// down its column (coalesced across threads), double accumulation. All indices are 64-bit (numel > 2^31).
__global__ void SumDim1Kernel(const float* __restrict__ x, float* __restrict__ y, int64_t outer, int64_t reduce,
                              int64_t inner) {
  const int64_t total = outer * inner;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; idx < total; idx += stride) {
    const int64_t o = idx / inner;
    const int64_t i = idx - o * inner;
    const float* col = x + o * reduce * inner + i;
    double acc = 0.0;
    for (int64_t r = 0; r < reduce - 1; ++r) acc += col[r * inner];
    y[idx] = static_cast<float>(acc);
  }
}

}  // namespace

ANVIL_EXPORT const char* anvil_last_error(void) { return g_error; }

// Input x [B, R, C] (KernelBench: 128 x 4096 x 4095); output [B, 1, C] = torch.sum(x, dim=1, keepdim=True).
// The reduced dimension (1) comes from get_init_inputs() and is hard-coded.
ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void* stream) {
  g_error = nullptr;
  if (n_in != 1 || n_out != 1) return Fail(1, "expected one input and one output");
  if (!IsF32(in[0], 3) || !IsF32(out[0], 3)) return Fail(2, "expected contiguous 3-D float32 tensors");
  const int64_t outer = in[0].shape[0], reduce = in[0].shape[1], inner = in[0].shape[2];
  if (out[0].shape[0] != outer || out[0].shape[1] != 1 || out[0].shape[2] != inner) {
    return Fail(3, "expected an output of shape [B, 1, C]");
  }
  const int64_t n = outer * inner;
  if (n == 0) return 0;
  SumDim1Kernel<<<GridFor(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<const float*>(in[0].data), static_cast<float*>(out[0].data), outer, reduce, inner);
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) return Fail(4, cudaGetErrorString(err));
  return 0;
}
