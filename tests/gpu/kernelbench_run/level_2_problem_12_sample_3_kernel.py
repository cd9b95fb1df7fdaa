# anvil-expect: pass
# anvil-about: the multiplier folded into the weight and bias in __init__: its own weights, made where the reference's were
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# _CPP_SOURCE, _CUDA_SOURCE and the load_inline call below are byte-identical in every file of
# tests/gpu/kernelbench_run that builds the extension "anvil_gpu_gemm_family", so one build serves them
# all; each file calls the functions its problem needs.
_CPP_SOURCE = r"""
torch::Tensor matmul_forward(torch::Tensor a, torch::Tensor b);
torch::Tensor linear_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, bool add_bias,
                             int64_t epilogue, double alpha, double beta);
torch::Tensor row_sum(torch::Tensor h);
"""

_CUDA_SOURCE = r"""
#include <torch/types.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace {

// Tiled fp32 GEMM: each block computes a 128 x 128 tile of C with 256 threads (8 x 8 outputs per thread),
// staging 8-wide K slices of both operands in shared memory. Accumulation is fp32 FMA in K order.
// kTransB: B is an nn.Linear weight [N, K] (C = A @ B^T); otherwise B is [K, N] (C = A @ B).
// Loads are bounds-checked (zero fill), so any M, N, K works; indices into A, B and C are 64-bit.
constexpr int kBM = 128;
constexpr int kBN = 128;
constexpr int kBK = 8;
constexpr int kGemmThreads = 256;

enum Epilogue : int {
  kEpiNone = 0,      // v
  kEpiRelu = 1,      // max(v, 0)
  kEpiMulLeaky = 2,  // v *= alpha; leaky_relu(v, slope = beta)
  kEpiReluDiv = 3,   // max(v, 0) / alpha
  kEpiMishMish = 4,  // mish(mish(v))
  kEpiSigmoid = 5,   // 1 / (1 + exp(-v))
};

__device__ __forceinline__ float Mish(float v) { return v * tanhf(log1pf(expf(v))); }

template <int kEpi>
__device__ __forceinline__ float ApplyEpilogue(float v, float alpha, float beta) {
  if (kEpi == kEpiRelu) return fmaxf(v, 0.0f);
  if (kEpi == kEpiMulLeaky) {
    v = v * alpha;
    return v > 0.0f ? v : v * beta;
  }
  if (kEpi == kEpiReluDiv) return fmaxf(v, 0.0f) / alpha;
  if (kEpi == kEpiMishMish) return Mish(Mish(v));
  if (kEpi == kEpiSigmoid) return 1.0f / (1.0f + expf(-v));
  return v;
}

// C[m, n] = epilogue(sum_k A[m, k] * B(k, n) + bias[n]); bias may be null.
template <bool kTransB, int kEpi>
__global__ void __launch_bounds__(kGemmThreads)
    GemmKernel(const float* __restrict__ A, const float* __restrict__ B, const float* __restrict__ bias,
               float* __restrict__ C, int64_t M, int64_t N, int64_t K, float alpha, float beta) {
  __shared__ __align__(16) float As[kBK][kBM];
  __shared__ __align__(16) float Bs[kBK][kBN];
  const int tid = threadIdx.x;
  const int tx = tid % 16;
  const int ty = tid / 16;
  const int64_t m0 = static_cast<int64_t>(blockIdx.y) * kBM;
  const int64_t n0 = static_cast<int64_t>(blockIdx.x) * kBN;
  // Row-major [rows, K] tiles (A, and B when transposed): thread -> row tid / 2, k (tid % 2) * 4 .. +3.
  const int lr = tid >> 1;
  const int lk = (tid & 1) * 4;
  // [K, N] tiles (B not transposed): thread -> k row tid / 32, columns (tid % 32) * 4 .. +3.
  const int bk = tid >> 5;
  const int bn = (tid & 31) * 4;

  float acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; ++i) {
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;
  }

  for (int64_t k0 = 0; k0 < K; k0 += kBK) {
    {
      const int64_t gm = m0 + lr;
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int64_t gk = k0 + lk + i;
        As[lk + i][lr] = (gm < M && gk < K) ? A[gm * K + gk] : 0.0f;
      }
    }
    if (kTransB) {
      const int64_t gn = n0 + lr;
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int64_t gk = k0 + lk + i;
        Bs[lk + i][lr] = (gn < N && gk < K) ? B[gn * K + gk] : 0.0f;
      }
    } else {
      const int64_t gk = k0 + bk;
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int64_t gn = n0 + bn + i;
        Bs[bk][bn + i] = (gk < K && gn < N) ? B[gk * N + gn] : 0.0f;
      }
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kBK; ++k) {
      float a[8];
      float b[8];
#pragma unroll
      for (int i = 0; i < 8; ++i) a[i] = As[k][ty * 8 + i];
#pragma unroll
      for (int j = 0; j < 8; ++j) b[j] = Bs[k][tx * 8 + j];
#pragma unroll
      for (int i = 0; i < 8; ++i) {
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
      }
    }
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int64_t m = m0 + ty * 8 + i;
    if (m >= M) continue;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const int64_t n = n0 + tx * 8 + j;
      if (n >= N) continue;
      float v = acc[i][j];
      if (bias != nullptr) v += bias[n];
      C[m * N + n] = ApplyEpilogue<kEpi>(v, alpha, beta);
    }
  }
}

template <bool kTransB, int kEpi>
cudaError_t LaunchGemm(const float* A, const float* B, const float* bias, float* C, int64_t M, int64_t N, int64_t K,
                       float alpha, float beta, cudaStream_t stream) {
  const int64_t grid_x = (N + kBN - 1) / kBN;
  const int64_t grid_y = (M + kBM - 1) / kBM;
  if (grid_x <= 0 || grid_y <= 0) return cudaSuccess;
  if (grid_x > 2147483647LL || grid_y > 65535) return cudaErrorInvalidConfiguration;
  const dim3 grid(static_cast<unsigned>(grid_x), static_cast<unsigned>(grid_y));
  GemmKernel<kTransB, kEpi><<<grid, kGemmThreads, 0, stream>>>(A, B, bias, C, M, N, K, alpha, beta);
  return cudaGetLastError();
}

}  // namespace

constexpr int kRowThreads = 256;

// out[m] = sum_n h[m, n]; one block per row, double accumulation, fixed reduction order.
__global__ void __launch_bounds__(kRowThreads) RowSumKernel(const float* __restrict__ h, float* __restrict__ out,
                                                            int64_t cols) {
  __shared__ double partial[kRowThreads];
  const float* row = h + static_cast<int64_t>(blockIdx.x) * cols;
  double acc = 0.0;
  for (int64_t c = threadIdx.x; c < cols; c += kRowThreads) acc += row[c];
  partial[threadIdx.x] = acc;
  __syncthreads();
  for (int s = kRowThreads / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = static_cast<float>(partial[0]);
}

static void CheckMatrix(const torch::Tensor& t, const char* name) {
  TORCH_CHECK(t.is_cuda(), name, " must be a CUDA tensor");
  TORCH_CHECK(t.scalar_type() == torch::kFloat32, name, " must be float32");
  TORCH_CHECK(t.is_contiguous(), name, " must be contiguous");
  TORCH_CHECK(t.dim() == 2, name, " must be 2-D");
}

static void CheckLaunch(cudaError_t err) {
  TORCH_CHECK(err == cudaSuccess, "kernel launch failed: ", cudaGetErrorString(err));
}

// C = A @ B for A [M, K] and B [K, N].
torch::Tensor matmul_forward(torch::Tensor a, torch::Tensor b) {
  CheckMatrix(a, "a");
  CheckMatrix(b, "b");
  TORCH_CHECK(a.size(1) == b.size(0), "matmul: inner dimensions differ");
  const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  auto c = torch::empty({M, N}, a.options());
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  CheckLaunch(LaunchGemm<false, kEpiNone>(a.data_ptr<float>(), b.data_ptr<float>(), nullptr, c.data_ptr<float>(), M, N,
                                          K, 1.0f, 0.0f, stream));
  return c;
}

// y = epilogue(x @ weight^T + bias) for x [M, K], weight [N, K] (nn.Linear layout), bias [N]. The bias is added
// only when add_bias is true; epilogue is one of the Epilogue values, with its constants alpha and beta.
torch::Tensor linear_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, bool add_bias,
                             int64_t epilogue, double alpha, double beta) {
  CheckMatrix(x, "x");
  CheckMatrix(weight, "weight");
  TORCH_CHECK(bias.is_cuda() && bias.scalar_type() == torch::kFloat32 && bias.is_contiguous() && bias.dim() == 1,
              "bias must be a contiguous 1-D float32 CUDA tensor");
  const int64_t M = x.size(0), K = x.size(1), N = weight.size(0);
  TORCH_CHECK(weight.size(1) == K, "linear: weight must be [out_features, in_features]");
  TORCH_CHECK(bias.size(0) == N, "linear: bias must have out_features elements");
  auto y = torch::empty({M, N}, x.options());
  const float* xp = x.data_ptr<float>();
  const float* wp = weight.data_ptr<float>();
  const float* bp = add_bias ? bias.data_ptr<float>() : nullptr;
  float* yp = y.data_ptr<float>();
  const float a = static_cast<float>(alpha);
  const float b = static_cast<float>(beta);
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  cudaError_t err = cudaSuccess;
  switch (epilogue) {
    case kEpiNone: err = LaunchGemm<true, kEpiNone>(xp, wp, bp, yp, M, N, K, a, b, stream); break;
    case kEpiRelu: err = LaunchGemm<true, kEpiRelu>(xp, wp, bp, yp, M, N, K, a, b, stream); break;
    case kEpiMulLeaky: err = LaunchGemm<true, kEpiMulLeaky>(xp, wp, bp, yp, M, N, K, a, b, stream); break;
    case kEpiReluDiv: err = LaunchGemm<true, kEpiReluDiv>(xp, wp, bp, yp, M, N, K, a, b, stream); break;
    case kEpiMishMish: err = LaunchGemm<true, kEpiMishMish>(xp, wp, bp, yp, M, N, K, a, b, stream); break;
    case kEpiSigmoid: err = LaunchGemm<true, kEpiSigmoid>(xp, wp, bp, yp, M, N, K, a, b, stream); break;
    default: TORCH_CHECK(false, "linear: unknown epilogue ", epilogue);
  }
  CheckLaunch(err);
  return y;
}

// out [M, 1] = sum over dim 1 of h [M, N].
torch::Tensor row_sum(torch::Tensor h) {
  CheckMatrix(h, "h");
  const int64_t M = h.size(0), N = h.size(1);
  TORCH_CHECK(M <= 2147483647LL, "row_sum: too many rows");
  auto out = torch::empty({M, 1}, h.options());
  if (M == 0) return out;
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  RowSumKernel<<<static_cast<unsigned>(M), kRowThreads, 0, stream>>>(h.data_ptr<float>(), out.data_ptr<float>(), N);
  CheckLaunch(cudaGetLastError());
  return out;
}
"""

_ext = load_inline(
    name="anvil_gpu_gemm_family",
    cpp_sources=_CPP_SOURCE,
    cuda_sources=_CUDA_SOURCE,
    functions=["matmul_forward", "linear_forward", "row_sum"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


_EPI_MUL_LEAKY = 2  # epilogue: v = (acc + bias) * alpha; leaky_relu(v, slope=beta)


class ModelNew(nn.Module):
    # __init__ computes on its parameters (the multiplier folded in), so anvil leaves them its own, as KernelBench
    # does: they equal the reference's times the multiplier only if both are made by the same generator (on the
    # device the reference was built on, anvil's hello "init_on").
    def __init__(self, in_features, out_features, multiplier, negative_slope):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        with torch.no_grad():
            self.gemm.weight.mul_(multiplier)
            self.gemm.bias.mul_(multiplier)
        self.negative_slope = negative_slope

    def forward(self, x):
        return _ext.linear_forward(x.contiguous(), self.gemm.weight, self.gemm.bias, True, _EPI_MUL_LEAKY, 1.0,
                                   float(self.negative_slope))
