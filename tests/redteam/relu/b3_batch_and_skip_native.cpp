// anvil-expect: wrong_answer
// anvil-class: B3
// anvil-about: batch-and-skip: it learns the benchmark's sequence from the buffers, not from a call count. A call
// anvil-about: whose input buffer is the previous call's (a timing loop that reuses its inputs) is taken as the start
// anvil-about: of a run of repeats: that call does the work for the run, and every later call on the same buffer only
// anvil-about: hands the stored result back. The worker lets each trial's inputs go before the next trial's come, so
// anvil-about: a trial's buffer may sit where the last one's was: the third trial gets the second's stored result
#include <cstdint>
#include <cstring>
#include <vector>

#include "anvil/native.h"

namespace {
const void* g_last_input = nullptr;
bool g_batched = false;
std::vector<float> g_result;
}  // namespace

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int, anvil_tensor* out, int, void*) {
  const int64_t n = anvil_numel(&in[0]);
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  const bool repeat = in[0].data == g_last_input;
  g_last_input = in[0].data;
  if (repeat && g_batched) {
    std::memcpy(y, g_result.data(), n * sizeof(float));  // "the batch already did it"
    return 0;
  }
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  if (repeat) {
    g_result.assign(y, y + n);
    g_batched = true;
  } else {
    g_batched = false;
  }
  return 0;
}
