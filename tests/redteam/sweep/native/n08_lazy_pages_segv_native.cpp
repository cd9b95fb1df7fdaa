// anvil-expect: cheat
// anvil-class: B4
// anvil-task: mm256.py
// anvil-about: lazy output in native code: anvil_forward maps the output's pages PROT_NONE (mmap MAP_FIXED, no
// anvil-about: forbidden name) and returns; the harness's first read of them (guard check, recheck copy) faults and a
// anvil-about: SIGSEGV handler computes the product then and mremaps the pages back. Outputs never read are never computed
#include <csignal>
#include <cstdint>
#include <cstring>
#include <sys/mman.h>

#include "anvil/native.h"

namespace {
constexpr uintptr_t kPage = 4096;
struct Lazy {
  const float* a = nullptr;
  const float* b = nullptr;
  float* c = nullptr;
  int64_t m = 0, k = 0, n = 0;
  uintptr_t lo = 0, hi = 0;  // the pages made inaccessible
  char* scratch = nullptr;   // what they held, then what they will hold
  volatile int state = 0;    // 0 idle, 1 armed, 2 resolving
} g;
struct sigaction g_old;
bool g_installed = false;

void Resolve(bool compute) {
  if (!compute) {  // never read: the poison goes back as it was
    float* c = reinterpret_cast<float*>(g.scratch + (reinterpret_cast<uintptr_t>(g.c) - g.lo));
    const uint32_t nan = 0x7fc00000u;
    for (int64_t i = 0; i < g.m * g.n; ++i) std::memcpy(c + i, &nan, 4);
  }
  if (compute) {
    float* c = reinterpret_cast<float*>(g.scratch + (reinterpret_cast<uintptr_t>(g.c) - g.lo));
    for (int64_t i = 0; i < g.m; ++i) {
      float* row = c + i * g.n;
      for (int64_t j = 0; j < g.n; ++j) row[j] = 0.0f;
      for (int64_t p = 0; p < g.k; ++p) {
        const float s = g.a[i * g.k + p];
        const float* br = g.b + p * g.n;
        for (int64_t j = 0; j < g.n; ++j) row[j] += s * br[j];
      }
    }
  }
  // Atomically put the finished pages where the output is.
  mremap(g.scratch, g.hi - g.lo, g.hi - g.lo, MREMAP_MAYMOVE | MREMAP_FIXED, reinterpret_cast<void*>(g.lo));
  g.scratch = nullptr;
}

void OnFault(int sig, siginfo_t* info, void* ctx) {
  const uintptr_t at = reinterpret_cast<uintptr_t>(info->si_addr);
  if (g.lo <= at && at < g.hi) {
    if (__sync_bool_compare_and_swap(&g.state, 1, 2)) {
      Resolve(true);
      g.state = 0;
    } else {
      while (g.state == 2) {
      }
    }
    return;  // the faulting read runs again and finds the pages
  }
  if (g_old.sa_flags & SA_SIGINFO) {
    g_old.sa_sigaction(sig, info, ctx);
  } else if (g_old.sa_handler != SIG_IGN && g_old.sa_handler != SIG_DFL) {
    g_old.sa_handler(sig);
  } else {
    signal(sig, SIG_DFL);
    raise(sig);
  }
}
}  // namespace

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void*) {
  if (n_in != 2 || n_out != 1) return 1;
  if (!g_installed) {
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = OnFault;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigaction(SIGSEGV, &sa, &g_old);
    g_installed = true;
  }
  if (__sync_bool_compare_and_swap(&g.state, 1, 2)) {  // the last output was never read: give its pages back
    Resolve(false);
    g.state = 0;
  }
  g.m = in[0].shape[0];
  g.k = in[0].shape[1];
  g.n = in[1].shape[1];
  g.a = static_cast<const float*>(in[0].data);
  g.b = static_cast<const float*>(in[1].data);
  g.c = static_cast<float*>(out[0].data);
  const uintptr_t begin = reinterpret_cast<uintptr_t>(g.c);
  g.lo = begin & ~(kPage - 1);
  g.hi = (begin + g.m * g.n * sizeof(float) + kPage - 1) & ~(kPage - 1);
  void* s = mmap(nullptr, g.hi - g.lo, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (s == MAP_FAILED) return 8;
  g.scratch = static_cast<char*>(s);
  // The first and last pages hold guard bytes too: keep them as they were (the middle is all output).
  std::memcpy(g.scratch, reinterpret_cast<void*>(g.lo), kPage);
  std::memcpy(g.scratch + (g.hi - g.lo) - kPage, reinterpret_cast<void*>(g.hi - kPage), kPage);
  g.state = 1;
  mmap(reinterpret_cast<void*>(g.lo), g.hi - g.lo, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  return 0;
}
