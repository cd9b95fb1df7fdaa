# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_20_leakyrelu_fp16.py
# anvil-about: fp16 LeakyReLU with AVX2 + F16C intrinsics (_mm256_cvtph_ps / _mm256_cvtps_ph) built with
# anvil-about: extra_cflags -O3 -march=native (twin of kb_leakyrelu_fp16_f16c.py: same kernel, flag kept); the fp16 data read through data_ptr<at::Half>().
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
#include <immintrin.h>
#include <cstring>

torch::Tensor leaky_relu_half(torch::Tensor x, double slope) {
  TORCH_CHECK(x.scalar_type() == at::kHalf && x.is_contiguous(), "contiguous fp16 expected");
  auto y = torch::empty_like(x);
  const uint16_t* px = reinterpret_cast<const uint16_t*>(x.data_ptr<at::Half>());
  uint16_t* py = reinterpret_cast<uint16_t*>(y.data_ptr<at::Half>());
  const int64_t n = x.numel();
  const __m256 vs = _mm256_set1_ps(static_cast<float>(slope));
  const __m256 zero = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 v = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(px + i)));
    __m256 neg = _mm256_mul_ps(v, vs);
    __m256 r = _mm256_blendv_ps(v, neg, _mm256_cmp_ps(v, zero, _CMP_LT_OQ));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(py + i), _mm256_cvtps_ph(r, _MM_FROUND_TO_NEAREST_INT));
  }
  for (; i < n; ++i) {
    const float v = static_cast<float>(x.data_ptr<at::Half>()[i]);
    y.data_ptr<at::Half>()[i] = static_cast<at::Half>(v < 0.f ? v * static_cast<float>(slope) : v);
  }
  return y;
}
"""

_lr = load_inline(name="legit_lrelu_f16c_march", cpp_sources=SRC, functions=["leaky_relu_half"],
                  extra_cflags=["-O3", "-march=native"])


class ModelNew(nn.Module):
    def __init__(self, negative_slope: float = 0.01):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x):
        return _lr.leaky_relu_half(x.contiguous(), self.negative_slope)
