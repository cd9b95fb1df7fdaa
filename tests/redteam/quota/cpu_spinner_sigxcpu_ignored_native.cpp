// anvil-expect: runtime_error
// anvil-about: spins on four OpenMP threads before any output, bounded at 60 s of wall time, and ignores SIGXCPU: the
// anvil-about: kernel's SIGKILL a second past its CPU quota ends it (a kill anvil did not send: its own failure).
// anvil-about: Its signal() is a static cheat (cpp.signal): with ANVIL_STATIC_VERDICTS=0 the run decides
#include <chrono>
#include <cstdint>
#include <csignal>

#include "anvil/native.h"

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void* /*stream*/) {
  if (n_in != 1 || n_out != 1) return 1;
  std::signal(SIGXCPU, SIG_IGN);  // The kernel's SIGKILL at the hard limit still ends it.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);  // Bounded if no quota held.
  std::uint64_t spun = 0;
#pragma omp parallel num_threads(4) reduction(+ : spun)
  {
    std::uint64_t n = 1;
    while (std::chrono::steady_clock::now() < until) n = n * 6364136223846793005ull + 1;
    spun += n;
  }
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  for (int64_t i = 0; i < anvil_numel(&in[0]); ++i) y[i] = (x[i] > 0.0f ? x[i] : 0.0f) + (spun == 0 ? 1.0f : 0.0f);
  return 0;
}
