// anvil-expect: cheat
// anvil-class: D1
// anvil-task: mm256.py
// anvil-about: returns at once and does the whole product in a SIGALRM handler armed with setitimer(60 us): the
// anvil-about: handler runs on the main thread after the timed call has sent `done`, before the output is copied
#include <csignal>
#include <cstdint>
#include <cstring>
#include <sys/time.h>

#include "anvil/native.h"

namespace {
const float* g_a;
const float* g_b;
float* g_c;
int64_t g_m, g_k, g_n;
volatile sig_atomic_t g_pending = 0;

void Compute() {
  for (int64_t i = 0; i < g_m; ++i) {
    float* row = g_c + i * g_n;
    for (int64_t j = 0; j < g_n; ++j) row[j] = 0.0f;
    for (int64_t p = 0; p < g_k; ++p) {
      const float s = g_a[i * g_k + p];
      const float* br = g_b + p * g_n;
      for (int64_t j = 0; j < g_n; ++j) row[j] += s * br[j];
    }
  }
}

void OnAlarm(int) {
  if (!g_pending) return;
  Compute();
  g_pending = 0;
}

bool g_installed = false;
}  // namespace

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void*) {
  if (n_in != 2 || n_out != 1) return 1;
  if (!g_installed) {
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_handler = OnAlarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, nullptr);
    g_installed = true;
  }
  if (g_pending) Compute();  // the previous one never fired: do it now
  g_m = in[0].shape[0];
  g_k = in[0].shape[1];
  g_n = in[1].shape[1];
  g_a = static_cast<const float*>(in[0].data);
  g_b = static_cast<const float*>(in[1].data);
  g_c = static_cast<float*>(out[0].data);
  g_pending = 1;
  struct itimerval t;
  std::memset(&t, 0, sizeof t);
  t.it_value.tv_usec = 60;
  setitimer(ITIMER_REAL, &t, nullptr);
  return 0;
}
