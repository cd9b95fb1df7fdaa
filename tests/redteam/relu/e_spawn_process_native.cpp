// anvil-expect: cheat
// anvil-class: E
// anvil-rule: sandbox.forbidden_syscall
// anvil-about: forks a helper process through a raw clone system call (a worker that would outlive the deadline or
// anvil-about: finish the work after forward returns); process creation is forbidden and kills the candidate
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

#include "anvil/native.h"

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void*) {
  long pid = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
  if (pid == 0) syscall(SYS_exit, 0);
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  for (int64_t i = 0; i < anvil_numel(&in[0]); ++i) y[i] = x[i] > 0 ? x[i] : 0;
  return 0;
}
