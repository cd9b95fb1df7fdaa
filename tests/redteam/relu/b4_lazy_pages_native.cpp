// anvil-expect: cheat
// anvil-class: B4
// anvil-rule: run.after_return
// anvil-static-rule: cpp.signal
// anvil-about: lazy output in native code: forward computes nothing, maps the output's pages PROT_NONE (mmap
// anvil-about: MAP_FIXED) and returns; a SIGSEGV handler computes at the first touch of those pages and maps the result
// anvil-about: back. The worker's write of a trial's output finds the memory unreadable, and a timed call's output
// anvil-about: is read with the signals still held, so the fault kills the process there: both are run.after_return
#include <csignal>
#include <cstdint>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

#include "anvil/native.h"

namespace {
const float* g_x = nullptr;
float* g_y = nullptr;
int64_t g_n = 0;
uintptr_t g_lo = 0, g_hi = 0;  // the pages wholly inside the output, made unreadable (no guard band shares them)
char* g_held = nullptr;        // what those pages hold, then what they will hold

void Resolve() {
  // The whole output: the part outside the held pages directly, the rest into them.
  for (int64_t i = 0; i < g_n; ++i) {
    const uintptr_t at = reinterpret_cast<uintptr_t>(g_y + i);
    float* y = at >= g_lo && at < g_hi ? reinterpret_cast<float*>(g_held + (at - g_lo)) : g_y + i;
    *y = g_x[i] > 0.0f ? g_x[i] : 0.0f;
  }
  mremap(g_held, g_hi - g_lo, g_hi - g_lo, MREMAP_MAYMOVE | MREMAP_FIXED, reinterpret_cast<void*>(g_lo));
  g_held = nullptr;
}

void OnFault(int, siginfo_t* info, void*) {
  const uintptr_t at = reinterpret_cast<uintptr_t>(info->si_addr);
  if (g_held != nullptr && g_lo <= at && at < g_hi) {
    Resolve();
    return;  // the faulting read runs again and finds the pages
  }
  signal(SIGSEGV, SIG_DFL);
  raise(SIGSEGV);
}
}  // namespace

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int, anvil_tensor* out, int, void*) {
  static bool installed = false;
  if (!installed) {
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = OnFault;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigaction(SIGSEGV, &sa, nullptr);
    installed = true;
  }
  if (g_held != nullptr) Resolve();  // the last call's output was never read
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  g_x = static_cast<const float*>(in[0].data);
  g_y = static_cast<float*>(out[0].data);
  g_n = anvil_numel(&in[0]);
  g_lo = (reinterpret_cast<uintptr_t>(g_y) + page - 1) & ~(page - 1);
  g_hi = reinterpret_cast<uintptr_t>(g_y + g_n) & ~(page - 1);
  void* held = mmap(nullptr, g_hi - g_lo, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (held == MAP_FAILED) return 1;
  g_held = static_cast<char*>(held);
  std::memcpy(g_held, reinterpret_cast<void*>(g_lo), g_hi - g_lo);
  mmap(reinterpret_cast<void*>(g_lo), g_hi - g_lo, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  return 0;
}
