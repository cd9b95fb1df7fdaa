# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_18_matmul_tboth.py
# anvil-about: A.T @ B.T with AVX2/FMA intrinsics (__m256, <immintrin.h>, -mavx2 -mfma), B packed into a
# anvil-about: std::vector workspace, constexpr tile width, static helpers, a scalar tail.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SOURCE = r"""
#include <torch/extension.h>
#include <immintrin.h>
#include <vector>

constexpr int64_t kLanes = 8;

static inline float hsum256(__m256 v) {
  __m128 lo = _mm256_castps256_ps128(v);
  __m128 hi = _mm256_extractf128_ps(v, 1);
  lo = _mm_add_ps(lo, hi);
  __m128 sh = _mm_movehdup_ps(lo);
  __m128 s = _mm_add_ps(lo, sh);
  sh = _mm_movehl_ps(sh, s);
  s = _mm_add_ss(s, sh);
  return _mm_cvtss_f32(s);
}

// A is [K, M], B is [N, K]; C = A^T B^T is [M, N]: C[i, j] = sum_k A[k, i] * B[j, k].
torch::Tensor matmul_tt(torch::Tensor A, torch::Tensor B) {
  TORCH_CHECK(A.is_contiguous() && B.is_contiguous(), "contiguous inputs expected");
  const int64_t K = A.size(0), M = A.size(1), N = B.size(0);
  TORCH_CHECK(B.size(1) == K, "shape mismatch");
  const float* a = A.data_ptr<float>();
  const float* b = B.data_ptr<float>();
  // Pack A^T once per call: row i of At is column i of A (contiguous over k, like B's rows).
  std::vector<float> at(static_cast<size_t>(M * K));
  for (int64_t k = 0; k < K; ++k)
    for (int64_t i = 0; i < M; ++i) at[i * K + k] = a[k * M + i];
  auto C = torch::empty({M, N}, A.options());
  float* c = C.data_ptr<float>();
  for (int64_t i = 0; i < M; ++i) {
    const float* ar = at.data() + i * K;
    for (int64_t j = 0; j < N; ++j) {
      const float* br = b + j * K;
      __m256 acc = _mm256_setzero_ps();
      int64_t k = 0;
      for (; k + kLanes <= K; k += kLanes)
        acc = _mm256_fmadd_ps(_mm256_loadu_ps(ar + k), _mm256_loadu_ps(br + k), acc);
      float s = hsum256(acc);
      for (; k < K; ++k) s += ar[k] * br[k];
      c[i * N + j] = s;
    }
  }
  return C;
}
"""

ext = load_inline(name="legit_matmul_tt_avx2", cpp_sources=SOURCE, functions=["matmul_tt"],
                  extra_cflags=["-O3", "-mavx2", "-mfma"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return ext.matmul_tt(A.contiguous(), B.contiguous())
