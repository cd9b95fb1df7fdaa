// anvil-expect: runtime_error
// anvil-about: assumes a 2-D [rows, features] input; for the real 4-D input it returns error code 3 with a message
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

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 16384;  // grid-stride loops cover the rest

unsigned GridFor(int64_t n) {
  int64_t blocks = (n + kThreads - 1) / kThreads;
  if (blocks < 1) blocks = 1;
  if (blocks > kMaxBlocks) blocks = kMaxBlocks;
  return static_cast<unsigned>(blocks);
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

constexpr int kLnThreads = 256;
constexpr int64_t kLnChunk = 65536;  // elements of one row summed by one block of the statistics pass

// partial[(row * chunks + chunk) * 2 + {0, 1}] = sum and sum of squares of one chunk of one row (double).
__global__ void __launch_bounds__(kLnThreads)
    LnPartialKernel(const float* __restrict__ x, int64_t features, int64_t chunks, double* __restrict__ partial) {
  const int64_t row = blockIdx.y;
  const int64_t chunk = blockIdx.x;
  const float* xr = x + row * features;
  const int64_t begin = chunk * kLnChunk;
  const int64_t end = begin + kLnChunk < features ? begin + kLnChunk : features;
  double s = 0.0;
  double ss = 0.0;
  for (int64_t c = begin + threadIdx.x; c < end; c += kLnThreads) {
    const double v = xr[c];
    s += v;
    ss += v * v;
  }
  s = BlockSum(s);
  ss = BlockSum(ss);
  if (threadIdx.x == 0) {
    partial[(row * chunks + chunk) * 2] = s;
    partial[(row * chunks + chunk) * 2 + 1] = ss;
  }
}

// stats[row * 2] = mean, stats[row * 2 + 1] = 1 / sqrt(biased variance + eps); one block per row.
__global__ void __launch_bounds__(kLnThreads)
    LnStatsKernel(const double* __restrict__ partial, int64_t chunks, int64_t features, double eps,
                  float* __restrict__ stats) {
  const int64_t row = blockIdx.x;
  double s = 0.0;
  double ss = 0.0;
  for (int64_t c = threadIdx.x; c < chunks; c += kLnThreads) {
    s += partial[(row * chunks + c) * 2];
    ss += partial[(row * chunks + c) * 2 + 1];
  }
  s = BlockSum(s);
  ss = BlockSum(ss);
  if (threadIdx.x == 0) {
    const double mean = s / static_cast<double>(features);
    double var = ss / static_cast<double>(features) - mean * mean;
    if (var < 0.0) var = 0.0;
    stats[row * 2] = static_cast<float>(mean);
    stats[row * 2 + 1] = static_cast<float>(1.0 / sqrt(var + eps));
  }
}

// y = (x - mean) * rstd * weight + bias, elementwise over all rows.
__global__ void LnApplyKernel(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
                              const float* __restrict__ stats, float* __restrict__ y, int64_t features, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const int64_t row = i / features;
    const int64_t j = i - row * features;
    y[i] = (x[i] - stats[row * 2]) * stats[row * 2 + 1] * w[j] + b[j];
  }
}

// Workspaces kept between calls (the harness calls from one thread; all work is on its stream).
double* g_partial = nullptr;
float* g_stats = nullptr;
size_t g_partial_count = 0;
size_t g_stats_count = 0;

cudaError_t EnsureWorkspace(size_t partial_count, size_t stats_count) {
  cudaError_t err = cudaSuccess;
  if (partial_count > g_partial_count) {
    if (g_partial != nullptr) cudaFree(g_partial);
    g_partial_count = 0;
    err = cudaMalloc(&g_partial, partial_count * sizeof(double));
    if (err != cudaSuccess) return err;
    g_partial_count = partial_count;
  }
  if (stats_count > g_stats_count) {
    if (g_stats != nullptr) cudaFree(g_stats);
    g_stats_count = 0;
    err = cudaMalloc(&g_stats, stats_count * sizeof(float));
    if (err != cudaSuccess) return err;
    g_stats_count = stats_count;
  }
  return cudaSuccess;
}

// nn.LayerNorm's default eps.
constexpr double kEps = 1e-5;

}  // namespace

ANVIL_EXPORT const char* anvil_last_error(void) { return g_error; }

// Inputs: x [*, normalized_shape], ln.weight and ln.bias [normalized_shape] (KernelBench: x [16, 64, 256, 256],
// normalized_shape (64, 256, 256)); output of x's shape.
ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void* stream) {
  g_error = nullptr;
  if (n_in != 3 || n_out != 1) return Fail(1, "expected inputs x, ln.weight, ln.bias and one output");
  const anvil_tensor& x = in[0];
  const anvil_tensor& w = in[1];
  const anvil_tensor& b = in[2];
  anvil_tensor& y = out[0];
  if (x.ndim != 2 || w.ndim != 1) return Fail(3, "expected a 2-D input [rows, features] and a 1-D weight");
  if (!IsF32(x, x.ndim) || !IsF32(w, w.ndim) || !IsF32(b, w.ndim) || !IsF32(y, x.ndim) || w.ndim > x.ndim) {
    return Fail(2, "expected contiguous float32 tensors, weight and bias of the normalized shape");
  }
  const int lead = x.ndim - w.ndim;
  for (int d = 0; d < w.ndim; ++d) {
    if (x.shape[lead + d] != w.shape[d] || b.shape[d] != w.shape[d]) {
      return Fail(3, "weight/bias shape differs from the trailing dims of x");
    }
  }
  for (int d = 0; d < x.ndim; ++d) {
    if (y.shape[d] != x.shape[d]) return Fail(3, "output shape differs from the input shape");
  }
  const int64_t features = anvil_numel(&w);
  const int64_t n = anvil_numel(&x);
  if (n == 0) return 0;
  const int64_t rows = n / features;
  const int64_t chunks = (features + kLnChunk - 1) / kLnChunk;
  if (rows > 65535 || chunks > 2147483647LL) return Fail(3, "too many rows for the statistics grid");
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  cudaError_t err = EnsureWorkspace(static_cast<size_t>(rows * chunks * 2), static_cast<size_t>(rows * 2));
  if (err != cudaSuccess) return Fail(5, cudaGetErrorString(err));
  LnPartialKernel<<<dim3(static_cast<unsigned>(chunks), static_cast<unsigned>(rows)), kLnThreads, 0, s>>>(
      static_cast<const float*>(x.data), features, chunks, g_partial);
  LnStatsKernel<<<static_cast<unsigned>(rows), kLnThreads, 0, s>>>(g_partial, chunks, features, kEps, g_stats);
  LnApplyKernel<<<GridFor(n), kThreads, 0, s>>>(static_cast<const float*>(x.data), static_cast<const float*>(w.data),
                                                static_cast<const float*>(b.data), g_stats,
                                                static_cast<float*>(y.data), features, n);
  err = cudaGetLastError();
  if (err != cudaSuccess) return Fail(4, cudaGetErrorString(err));
  return 0;
}
