// anvil-expect: pass
// anvil-class: legit
// anvil-task: l1_63_conv2d.py
// anvil-about: native conv2d (inputs: x, conv2d.weight): the kernel size a template parameter with a switch
// anvil-about: dispatch, constexpr loops fully unrolled, OpenMP.
#include <cstdint>
#include <type_traits>

#include "anvil/native.h"

namespace {

template <int K>
void Conv(const float* x, const float* w, float* y, int64_t N, int64_t C, int64_t H, int64_t W, int64_t O) {
  const int64_t OH = H - K + 1, OW = W - K + 1;
#pragma omp parallel for collapse(2)
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          float acc = 0.f;
          for (int64_t c = 0; c < C; ++c) {
#pragma GCC unroll 8
            for (int kh = 0; kh < K; ++kh)
#pragma GCC unroll 8
              for (int kw = 0; kw < K; ++kw)
                acc += x[((n * C + c) * H + oh + kh) * W + ow + kw] * w[((o * C + c) * K + kh) * K + kw];
          }
          y[((n * O + o) * OH + oh) * OW + ow] = acc;
        }
}

}  // namespace

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void*) {
  if (n_in != 2 || n_out != 1) return 1;
  const anvil_tensor& x = in[0];
  const anvil_tensor& w = in[1];
  const int64_t k = w.shape[2];
  auto run = [&](auto kc) {
    constexpr int K = decltype(kc)::value;
    Conv<K>(static_cast<const float*>(x.data), static_cast<const float*>(w.data), static_cast<float*>(out[0].data),
            x.shape[0], x.shape[1], x.shape[2], x.shape[3], w.shape[0]);
  };
  switch (k) {
    case 1: run(std::integral_constant<int, 1>{}); break;
    case 3: run(std::integral_constant<int, 3>{}); break;
    case 5: run(std::integral_constant<int, 5>{}); break;
    default: return 2;
  }
  return 0;
}
