# anvil-expect: pass
# anvil-about: sum over self.dim with keepdim: one thread per output, double accumulator, 64-bit indices
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# _CPP_SOURCE, _CUDA_SOURCE and the load_inline call below are byte-identical in every file of
# tests/gpu/kernelbench_run that builds the extension "anvil_gpu_pointwise_family", so one build serves them
# all; each file calls the functions its problem needs.
_CPP_SOURCE = r"""
torch::Tensor sigmoid_forward(torch::Tensor x);
torch::Tensor scale_forward(torch::Tensor a, double s);
torch::Tensor softmax_forward(torch::Tensor x);
torch::Tensor sum_dim_forward(torch::Tensor x, int64_t dim);
torch::Tensor hinge_loss_forward(torch::Tensor pred, torch::Tensor targ);
torch::Tensor mse_loss_forward(torch::Tensor pred, torch::Tensor targ);
torch::Tensor layer_norm_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps);
torch::Tensor layer_norm_after_flag(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps);
torch::Tensor layer_norm_far_store(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps);
"""

_CUDA_SOURCE = r"""
#include <torch/types.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace {

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

__global__ void SigmoidKernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    y[i] = 1.0f / (1.0f + expf(-x[i]));
  }
}

// Waits for a "ready" flag that no one ever sets; the volatile read keeps the loop from being optimized away.
__global__ void WaitForFlag(const volatile int* flag) {
  while (*flag == 0) {
  }
}

__global__ void ScaleKernel(const float* __restrict__ a, float* __restrict__ c, float s, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) c[i] = a[i] * s;
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
    for (int64_t r = 0; r < reduce; ++r) acc += col[r * inner];
    y[idx] = static_cast<float>(acc);
  }
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

// Row-blocked: block b handles rows b, b + gridDim.x, ...; threads stride over the columns. targ[c] is the
// broadcast target of column c (targets [D] against predictions [B, D]).
__global__ void __launch_bounds__(kReduceThreads)
    HingePartialKernel(const float* __restrict__ pred, const float* __restrict__ targ, int64_t rows, int64_t cols,
                       double* __restrict__ partial) {
  double acc = 0.0;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* pr = pred + r * cols;
    for (int64_t c = threadIdx.x; c < cols; c += kReduceThreads) {
      const float v = 1.0f - pr[c] * targ[c];
      acc += v > 0.0f ? v : 0.0f;
    }
  }
  acc = BlockSum(acc);
  if (threadIdx.x == 0) partial[blockIdx.x] = acc;
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

// Bug on purpose: LnApplyKernel with the store going to y + i + kFar (2^38 floats, 1 TiB, past the output), far
// outside any allocation.
constexpr int64_t kFar = int64_t{1} << 38;

__global__ void LnApplyKernelFarStore(const float* __restrict__ x, const float* __restrict__ w,
                                      const float* __restrict__ b, const float* __restrict__ stats,
                                      float* __restrict__ y, int64_t features, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const int64_t row = i / features;
    const int64_t j = i - row * features;
    y[i + kFar] = (x[i] - stats[row * 2]) * stats[row * 2 + 1] * w[j] + b[j];
  }
}

}  // namespace

static void CheckFloatCuda(const torch::Tensor& t, const char* name) {
  TORCH_CHECK(t.is_cuda(), name, " must be a CUDA tensor");
  TORCH_CHECK(t.scalar_type() == torch::kFloat32, name, " must be float32");
  TORCH_CHECK(t.is_contiguous(), name, " must be contiguous");
}

static void CheckLaunch(cudaError_t err) {
  TORCH_CHECK(err == cudaSuccess, "kernel launch failed: ", cudaGetErrorString(err));
}

// 1 / (1 + exp(-x)) elementwise.
torch::Tensor sigmoid_forward(torch::Tensor x) {
  CheckFloatCuda(x, "x");
  auto y = torch::empty_like(x);
  const int64_t n = x.numel();
  if (n == 0) return y;
  SigmoidKernel<<<GridFor(n), kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(x.data_ptr<float>(),
                                                                               y.data_ptr<float>(), n);
  CheckLaunch(cudaGetLastError());
  return y;
}

// a * s elementwise (s rounded to float, as torch does for a float32 tensor times a Python float).
torch::Tensor scale_forward(torch::Tensor a, double s) {
  CheckFloatCuda(a, "a");
  auto c = torch::empty_like(a);
  const int64_t n = a.numel();
  if (n == 0) return c;
  ScaleKernel<<<GridFor(n), kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(a.data_ptr<float>(), c.data_ptr<float>(),
                                                                             static_cast<float>(s), n);
  CheckLaunch(cudaGetLastError());
  return c;
}

// Softmax over the last dimension (dim 1 of a 2-D input), one block per row.
torch::Tensor softmax_forward(torch::Tensor x) {
  CheckFloatCuda(x, "x");
  TORCH_CHECK(x.dim() >= 1, "softmax: x must have at least one dimension");
  auto y = torch::empty_like(x);
  const int64_t cols = x.size(-1);
  if (x.numel() == 0) return y;
  const int64_t rows = x.numel() / cols;
  TORCH_CHECK(rows <= 2147483647LL, "softmax: too many rows");
  SoftmaxRowsKernel<<<static_cast<unsigned>(rows), kSoftmaxThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
      x.data_ptr<float>(), y.data_ptr<float>(), cols);
  CheckLaunch(cudaGetLastError());
  return y;
}

// torch.sum(x, dim, keepdim=True).
torch::Tensor sum_dim_forward(torch::Tensor x, int64_t dim) {
  CheckFloatCuda(x, "x");
  const int64_t nd = x.dim();
  TORCH_CHECK(nd >= 1, "sum: x must have at least one dimension");
  if (dim < 0) dim += nd;
  TORCH_CHECK(dim >= 0 && dim < nd, "sum: dim out of range");
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= x.size(d);
  for (int64_t d = dim + 1; d < nd; ++d) inner *= x.size(d);
  const int64_t reduce = x.size(dim);
  std::vector<int64_t> out_shape = x.sizes().vec();
  out_shape[dim] = 1;
  auto y = torch::empty(out_shape, x.options());
  const int64_t n = outer * inner;
  if (n == 0) return y;
  SumDim1Kernel<<<GridFor(n), kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(x.data_ptr<float>(), y.data_ptr<float>(),
                                                                               outer, reduce, inner);
  CheckLaunch(cudaGetLastError());
  return y;
}

// mean(clamp(1 - predictions * targets, min=0)) for predictions [B, D] and targets [D] (broadcast over rows).
torch::Tensor hinge_loss_forward(torch::Tensor pred, torch::Tensor targ) {
  CheckFloatCuda(pred, "predictions");
  CheckFloatCuda(targ, "targets");
  TORCH_CHECK(pred.dim() == 2 && targ.dim() == 1 && targ.size(0) == pred.size(1),
              "hinge: expected predictions [B, D] and targets [D]");
  const int64_t rows = pred.size(0), cols = pred.size(1);
  TORCH_CHECK(rows * cols > 0, "hinge: empty input");
  auto out = torch::empty({}, pred.options());
  const int blocks = rows < kReduceBlocks ? static_cast<int>(rows) : kReduceBlocks;
  auto partial = torch::empty({blocks}, pred.options().dtype(torch::kFloat64));
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  HingePartialKernel<<<blocks, kReduceThreads, 0, stream>>>(pred.data_ptr<float>(), targ.data_ptr<float>(), rows, cols,
                                                           partial.data_ptr<double>());
  FinishMeanKernel<<<1, kReduceThreads, 0, stream>>>(partial.data_ptr<double>(), blocks,
                                                    static_cast<double>(rows * cols), out.data_ptr<float>());
  CheckLaunch(cudaGetLastError());
  return out;
}

// mean((predictions - targets) ** 2) over all elements.
torch::Tensor mse_loss_forward(torch::Tensor pred, torch::Tensor targ) {
  CheckFloatCuda(pred, "predictions");
  CheckFloatCuda(targ, "targets");
  TORCH_CHECK(pred.sizes() == targ.sizes(), "mse: predictions and targets differ in shape");
  const int64_t n = pred.numel();
  TORCH_CHECK(n > 0, "mse: empty input");
  auto out = torch::empty({}, pred.options());
  const int64_t wanted = (n + kReduceThreads - 1) / kReduceThreads;
  const int blocks = wanted < kReduceBlocks ? static_cast<int>(wanted) : kReduceBlocks;
  auto partial = torch::empty({blocks}, pred.options().dtype(torch::kFloat64));
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  SquaredErrorPartialKernel<<<blocks, kReduceThreads, 0, stream>>>(pred.data_ptr<float>(), targ.data_ptr<float>(), n,
                                                                  partial.data_ptr<double>());
  FinishMeanKernel<<<1, kReduceThreads, 0, stream>>>(partial.data_ptr<double>(), blocks, static_cast<double>(n),
                                                    out.data_ptr<float>());
  CheckLaunch(cudaGetLastError());
  return out;
}

// nn.LayerNorm over the trailing weight.dim() dimensions of x, with elementwise affine weight and bias.
// wait_first: first launch a kernel that waits forever for a flag nobody sets. far_store: use the apply kernel
// that stores outside the output. (Both are there for anvil's timeout and runtime_error tests.)
static torch::Tensor LayerNorm(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps, bool wait_first,
                               bool far_store) {
  CheckFloatCuda(x, "x");
  CheckFloatCuda(weight, "weight");
  CheckFloatCuda(bias, "bias");
  const int64_t nd = x.dim(), wd = weight.dim();
  TORCH_CHECK(wd >= 1 && wd <= nd && bias.sizes() == weight.sizes(), "layer_norm: bad weight/bias shapes");
  for (int64_t d = 0; d < wd; ++d) {
    TORCH_CHECK(x.size(nd - wd + d) == weight.size(d), "layer_norm: weight shape differs from the trailing dims of x");
  }
  auto y = torch::empty_like(x);
  const int64_t features = weight.numel();
  const int64_t n = x.numel();
  if (n == 0) return y;
  const int64_t rows = n / features;
  const int64_t chunks = (features + kLnChunk - 1) / kLnChunk;
  TORCH_CHECK(rows <= 65535, "layer_norm: too many rows for the statistics grid");
  auto partial = torch::empty({rows * chunks * 2}, x.options().dtype(torch::kFloat64));
  auto stats = torch::empty({rows * 2}, x.options());
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  if (wait_first) {
    auto flag = torch::zeros({1}, x.options().dtype(torch::kInt32));
    WaitForFlag<<<1, 1, 0, stream>>>(flag.data_ptr<int>());
  }
  LnPartialKernel<<<dim3(static_cast<unsigned>(chunks), static_cast<unsigned>(rows)), kLnThreads, 0, stream>>>(
      x.data_ptr<float>(), features, chunks, partial.data_ptr<double>());
  LnStatsKernel<<<static_cast<unsigned>(rows), kLnThreads, 0, stream>>>(partial.data_ptr<double>(), chunks, features,
                                                                       eps, stats.data_ptr<float>());
  if (far_store) {
    LnApplyKernelFarStore<<<GridFor(n), kThreads, 0, stream>>>(x.data_ptr<float>(), weight.data_ptr<float>(),
                                                               bias.data_ptr<float>(), stats.data_ptr<float>(),
                                                               y.data_ptr<float>(), features, n);
  } else {
    LnApplyKernel<<<GridFor(n), kThreads, 0, stream>>>(x.data_ptr<float>(), weight.data_ptr<float>(),
                                                       bias.data_ptr<float>(), stats.data_ptr<float>(),
                                                       y.data_ptr<float>(), features, n);
  }
  CheckLaunch(cudaGetLastError());
  return y;
}

torch::Tensor layer_norm_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps) {
  return LayerNorm(x, weight, bias, eps, false, false);
}

// Never finishes: the statistics kernels queue behind a kernel that spins forever.
torch::Tensor layer_norm_after_flag(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps) {
  return LayerNorm(x, weight, bias, eps, true, false);
}

// Faults: the apply kernel stores 1 TiB past the output (illegal address).
torch::Tensor layer_norm_far_store(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps) {
  return LayerNorm(x, weight, bias, eps, false, true);
}
"""

_ext = load_inline(
    name="anvil_gpu_pointwise_family",
    cpp_sources=_CPP_SOURCE,
    cuda_sources=_CUDA_SOURCE,
    functions=["sigmoid_forward", "scale_forward", "softmax_forward", "sum_dim_forward", "hinge_loss_forward",
        "mse_loss_forward", "layer_norm_forward", "layer_norm_after_flag", "layer_norm_far_store"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.sum_dim_forward(x.contiguous(), self.dim)
