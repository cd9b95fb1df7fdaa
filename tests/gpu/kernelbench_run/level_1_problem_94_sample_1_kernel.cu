// anvil-expect: pass
// anvil-about: MSE mean((pred - targ)^2) over all elements: grid-stride block partials in double, then one finishing block
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

// Sum of `v` over the block (blockDim.x a multiple of 32, at most 1024); the result is valid in thread 0.
__device__ double BlockSum(double v) {
  __shared__ double warp_sums[32];
  for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  const int warps = blockDim.x >> 5;
  v = threadIdx.x < warps ? warp_sums[threadIdx.x] : 0.0;
  if (warp == 0) {
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
  }
  __syncthreads();  // warp_sums may be reused by a following call
  return v;
}

constexpr int kReduceThreads = 256;
constexpr int kReduceBlocks = 1024;

// Final step of a mean: out[0] = (sum of partial[0 .. count-1]) / n, in one block.
__global__ void __launch_bounds__(kReduceThreads)
    FinishMeanKernel(const double* __restrict__ partial, int count, double n, float* __restrict__ out) {
  double acc = 0.0;
  for (int i = threadIdx.x; i < count; i += kReduceThreads) acc += partial[i];
  acc = BlockSum(acc);
  if (threadIdx.x == 0) out[0] = static_cast<float>(acc / n);
}

// Per-block partial sums, kept between calls (the harness calls from one thread, all on its stream).
double* g_partial = nullptr;

cudaError_t EnsurePartial() {
  if (g_partial != nullptr) return cudaSuccess;
  return cudaMalloc(&g_partial, kReduceBlocks * sizeof(double));
}

__global__ void __launch_bounds__(kReduceThreads)
    SquaredErrorPartialKernel(const float* __restrict__ pred, const float* __restrict__ targ, int64_t n,
                              double* __restrict__ partial) {
  double acc = 0.0;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kReduceThreads;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kReduceThreads + threadIdx.x; i < n; i += stride) {
    const float d = pred[i] - targ[i];
    acc += d * d;
  }
  acc = BlockSum(acc);
  if (threadIdx.x == 0) partial[blockIdx.x] = acc;
}

}  // namespace

ANVIL_EXPORT const char* anvil_last_error(void) { return g_error; }

// Inputs: predictions and targets of one shape (KernelBench: 32768 x 32768); output: a 0-d float32 scalar.
ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void* stream) {
  g_error = nullptr;
  if (n_in != 2 || n_out != 1) return Fail(1, "expected inputs predictions, targets and one output");
  const anvil_tensor& pred = in[0];
  const anvil_tensor& targ = in[1];
  if (!IsF32(pred, pred.ndim) || !IsF32(targ, pred.ndim) || !IsF32(out[0], 0)) {
    return Fail(2, "expected float32 predictions and targets of one rank and a 0-d output");
  }
  for (int d = 0; d < pred.ndim; ++d) {
    if (targ.shape[d] != pred.shape[d]) return Fail(3, "predictions and targets differ in shape");
  }
  const int64_t n = anvil_numel(&pred);
  if (n == 0) return Fail(3, "empty input: the mean is undefined");
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  cudaError_t err = EnsurePartial();
  if (err != cudaSuccess) return Fail(5, cudaGetErrorString(err));
  const int64_t wanted = (n + kReduceThreads - 1) / kReduceThreads;
  const int blocks = wanted < kReduceBlocks ? static_cast<int>(wanted) : kReduceBlocks;
  SquaredErrorPartialKernel<<<blocks, kReduceThreads, 0, s>>>(static_cast<const float*>(pred.data),
                                                             static_cast<const float*>(targ.data), n, g_partial);
  FinishMeanKernel<<<1, kReduceThreads, 0, s>>>(g_partial, blocks, static_cast<double>(n),
                                                static_cast<float*>(out[0].data));
  err = cudaGetLastError();
  if (err != cudaSuccess) return Fail(4, cudaGetErrorString(err));
  return 0;
}
