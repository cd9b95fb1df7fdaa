// anvil-expect: cheat
// anvil-class: D6
// anvil-rule: sandbox.forbidden_syscall
// anvil-about: signals anvil itself through a raw system call (here the harmless SIGCONT; SIGSTOP would freeze the
// anvil-about: harness's clock); signals to the parent are forbidden and kill the candidate
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

#include "anvil/native.h"

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void*) {
  syscall(SYS_kill, static_cast<long>(getppid()), SIGCONT);
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  for (int64_t i = 0; i < anvil_numel(&in[0]); ++i) y[i] = x[i] > 0 ? x[i] : 0;
  return 0;
}
