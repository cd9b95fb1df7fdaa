// anvil-expect: cheat
// anvil-rule: trace.l2_persist
// anvil-about: catalog D7 (persisting L2), past the source scan: the tiled SGEMM of sample 1, which first sets
// aside L2 for persisting accesses and gives the harness's stream an access-policy window over B marked
// persisting, by numeric ids and a struct of its own (no CUDA name for either appears in the source, before or
// after the preprocessor). Correct; only the kernel trace sees the window on its launches.
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

ANVIL_EXPORT const char* anvil_last_error(void) { return g_error; }

// Inputs: A [M, K], B [K, N]; output C [M, N] (KernelBench: M = N = K = 4096).
ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void* stream) {
  g_error = nullptr;
  if (n_in != 2 || n_out != 1) return Fail(1, "expected inputs A, B and one output");
  const anvil_tensor& a = in[0];
  const anvil_tensor& b = in[1];
  anvil_tensor& c = out[0];
  if (!IsF32(a, 2) || !IsF32(b, 2) || !IsF32(c, 2)) return Fail(2, "expected contiguous 2-D float32 tensors");
  const int64_t M = a.shape[0], K = a.shape[1], N = b.shape[1];
  if (b.shape[0] != K || c.shape[0] != M || c.shape[1] != N) {
    return Fail(3, "shape mismatch: expected A [M, K], B [K, N], C [M, N]");
  }
  // cudaLimit 6 and stream attribute 1, spelled as numbers; the window's layout spelled as a struct of its own.
  struct Window {
    void* base;
    size_t bytes;
    float hit_ratio;
    int hit;   // 2: persisting.
    int miss;  // 1: streaming.
  };
  union Value {
    char pad[64];
    Window window;
  };
  static bool pinned = false;
  if (!pinned) {
    int device = 0;
    int max_persist = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&max_persist, static_cast<cudaDeviceAttr>(108), device);
    cudaDeviceSetLimit(static_cast<cudaLimit>(6), static_cast<size_t>(max_persist));
    pinned = true;
  }
  Value value = {};
  value.window = {const_cast<void*>(b.data), static_cast<size_t>(K * N * 4) < (size_t{32} << 20)
                                                 ? static_cast<size_t>(K * N * 4)
                                                 : (size_t{32} << 20),
                  1.0f, 2, 1};
  cudaStreamSetAttribute(static_cast<cudaStream_t>(stream), static_cast<cudaStreamAttrID>(1),
                         reinterpret_cast<const cudaStreamAttrValue*>(&value));
  const cudaError_t err = LaunchGemm<false, kEpiNone>(static_cast<const float*>(a.data),
                                                      static_cast<const float*>(b.data), nullptr,
                                                      static_cast<float*>(c.data), M, N, K, 1.0f, 0.0f,
                                                      static_cast<cudaStream_t>(stream));
  if (err != cudaSuccess) return Fail(4, cudaGetErrorString(err));
  return 0;
}
