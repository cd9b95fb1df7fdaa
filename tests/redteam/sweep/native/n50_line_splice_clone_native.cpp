// anvil-expect: cheat
// anvil-class: D2
// anvil-task: examples/tasks/matmul.py
// anvil-about: (a SIGALRM 50 us after each return holds the main thread, outside the timed call, until the worker is done)
// anvil-about: n05 with the call spelled `cl\<newline>one(` (a line splice inside the identifier) instead of an asm
// anvil-about: label: the scan as written reads two words, the scan after `g++ -E` reads `clone` (control: caught)
#include <sys/mman.h>
#include <sched.h>
#include <sched.h>
#include <sys/time.h>
#include <csignal>
#include <cstdint>
#include <cstring>

#include "anvil/native.h"

namespace {
struct Job {
  const float* a;
  const float* b;
  float* c;
  int64_t m, k, n;
};
Job g_job;
volatile int g_posted = 0;  // jobs posted
volatile int g_done = 0;    // jobs finished

void Multiply(const Job& j) {
  for (int64_t i = 0; i < j.m; ++i) {
    float* row = j.c + i * j.n;
    for (int64_t x = 0; x < j.n; ++x) row[x] = 0.0f;
    for (int64_t p = 0; p < j.k; ++p) {
      const float s = j.a[i * j.k + p];
      const float* br = j.b + p * j.n;
      for (int64_t x = 0; x < j.n; ++x) row[x] += s * br[x];
    }
  }
}

// The worker: forever, the latest posted job, after the call that posted it returned.
void WorkerLoop() {
  int seen = 0;
  for (;;) {
    const int posted = __atomic_load_n(&g_posted, __ATOMIC_ACQUIRE);
    if (posted == seen) {
      sched_yield();
      continue;
    }
    seen = posted;
    Job j = g_job;
    Multiply(j);
    __atomic_store_n(&g_done, seen, __ATOMIC_RELEASE);
  }
}

// 50 us after the call returned (its time is taken by then), the main thread waits here, outside the timed
// call, until the worker is done: the harness reads nothing before that.
void AwaitWorker(int) {
  while (__atomic_load_n(&g_done, __ATOMIC_ACQUIRE) != g_posted) sched_yield();
}

int Post(const anvil_tensor* in, anvil_tensor* out) {
  static bool armed = false;
  if (!armed) {
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_handler = AwaitWorker;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, nullptr);
    armed = true;
  }
  AwaitWorker(0);  // the previous job, had its alarm not come yet
  g_job = {static_cast<const float*>(in[0].data), static_cast<const float*>(in[1].data),
           static_cast<float*>(out[0].data), in[0].shape[0], in[0].shape[1], in[1].shape[1]};
  __atomic_store_n(&g_posted, g_posted + 1, __ATOMIC_RELEASE);
  struct itimerval t;
  std::memset(&t, 0, sizeof t);
  t.it_value.tv_usec = 50;
  setitimer(ITIMER_REAL, &t, nullptr);
  return 0;
}
}  // namespace


namespace {
int Run(void*) {
  WorkerLoop();
  return 0;
}
bool g_started = false;
}  // namespace

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void*) {
  if (n_in != 2 || n_out != 1) return 1;
  if (!g_started) {
    const size_t size = 1 << 20;
    void* stack = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (stack == MAP_FAILED) return 7;
    const int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM;
    if (cl\
one(Run, static_cast<char*>(stack) + size, flags, nullptr) == -1) return 8;
    g_started = true;
  }
  return Post(in, out);
}
