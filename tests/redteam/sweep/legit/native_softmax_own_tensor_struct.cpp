// anvil-expect: pass
// anvil-class: legit
// anvil-task: l1_23_softmax.py
// anvil-about: native softmax with the author's own tiny row-major view type named `Tensor` (wrapping an
// anvil-about: anvil_tensor) whose inline methods max(r)/sum(r) reduce one row; no torch anywhere.
#include <cmath>
#include <cstdint>

#include "anvil/native.h"

namespace {

struct Tensor {
  float* p;
  int64_t rows, cols;
  float* row(int64_t r) const { return p + r * cols; }
  float max(int64_t r) const {
    float m = row(r)[0];
    for (int64_t c = 1; c < cols; ++c) m = row(r)[c] > m ? row(r)[c] : m;
    return m;
  }
  float sum(int64_t r) const {
    float s = 0.f;
    for (int64_t c = 0; c < cols; ++c) s += row(r)[c];
    return s;
  }
};

}  // namespace

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void*) {
  if (n_in != 1 || n_out != 1 || in[0].ndim != 2) return 1;
  Tensor x{static_cast<float*>(in[0].data), in[0].shape[0], in[0].shape[1]};
  Tensor y{static_cast<float*>(out[0].data), out[0].shape[0], out[0].shape[1]};
  for (int64_t r = 0; r < x.rows; ++r) {
    const float m = x.max(r);
    for (int64_t c = 0; c < x.cols; ++c) y.row(r)[c] = std::exp(x.row(r)[c] - m);
    const float inv = 1.f / y.sum(r);
    for (int64_t c = 0; c < y.cols; ++c) y.row(r)[c] *= inv;
  }
  return 0;
}
