// anvil-expect: cheat
// anvil-class: D2
// anvil-rule: run.after_return
// anvil-static-rule: cpp.signal
// anvil-about: each timed call returns at once and a SIGALRM handler, armed for 200 us later, writes the output:
// anvil-about: the work is done after the call (no thread to count); the worker holds its signals from the return
// anvil-about: until it has looked at the output, which it then finds changed
#include <signal.h>
#include <sys/time.h>

#include <cstdint>

#include "anvil/native.h"

namespace {
const float* g_x = nullptr;
float* g_y = nullptr;
int64_t g_n = 0;
int g_calls = 0;

void Finish(int) {
  for (int64_t i = 0; i < g_n; ++i) g_y[i] = g_x[i] > 0.0f ? g_x[i] : 0.0f;
}
}  // namespace

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void* /*stream*/) {
  if (n_in != 1 || n_out != 1) return 1;
  g_x = static_cast<const float*>(in[0].data);
  g_y = static_cast<float*>(out[0].data);
  g_n = anvil_numel(&in[0]);
  // The correctness trials (the first three calls) are done honestly; from then on the work moves out of the call.
  if (++g_calls <= 3) {
    Finish(0);
    return 0;
  }
  struct sigaction sa = {};
  sa.sa_handler = Finish;
  sigaction(SIGALRM, &sa, nullptr);
  itimerval t = {};
  t.it_value.tv_usec = 200;
  setitimer(ITIMER_REAL, &t, nullptr);
  return 0;
}
