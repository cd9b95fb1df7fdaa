// anvil-expect: cheat
// anvil-class: D1
// anvil-task: mm256.py
// anvil-about: a POSIX timer (timer_create, SIGEV_THREAD_ID aimed at the calling thread, gettid) delivers SIGRTMIN
// anvil-about: 60 us after anvil_forward returned; the handler computes the whole product outside the timed call
#include <csignal>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <unistd.h>

#include "anvil/native.h"

namespace {
const float* g_a;
const float* g_b;
float* g_c;
int64_t g_m, g_k, g_n;
volatile sig_atomic_t g_pending = 0;
timer_t g_timer;
bool g_ready = false;

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

void OnTimer(int) {
  if (!g_pending) return;
  Compute();
  g_pending = 0;
}
}  // namespace

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void*) {
  if (n_in != 2 || n_out != 1) return 1;
  if (!g_ready) {
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_handler = OnTimer;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGRTMIN + 3, &sa, nullptr);
    struct sigevent ev;
    std::memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_THREAD_ID;
    ev.sigev_signo = SIGRTMIN + 3;
    ev._sigev_un._tid = gettid();
    if (timer_create(CLOCK_MONOTONIC, &ev, &g_timer) != 0) return 7;
    g_ready = true;
  }
  if (g_pending) Compute();
  g_m = in[0].shape[0];
  g_k = in[0].shape[1];
  g_n = in[1].shape[1];
  g_a = static_cast<const float*>(in[0].data);
  g_b = static_cast<const float*>(in[1].data);
  g_c = static_cast<float*>(out[0].data);
  g_pending = 1;
  struct itimerspec t;
  std::memset(&t, 0, sizeof t);
  t.it_value.tv_nsec = 60000;
  timer_settime(g_timer, 0, &t, nullptr);
  return 0;
}
