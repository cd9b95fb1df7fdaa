// anvil-expect: cheat
// anvil-class: D4
// anvil-rule: sandbox.forbidden_syscall
// anvil-about: attaches to its parent with ptrace through a raw system call (no name the static scan knows), the
// anvil-about: first step of patching the harness; the sandbox's seccomp filter must kill it on the spot
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

#include "anvil/native.h"

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void*) {
  const long kPtraceAttach = 16;
  syscall(SYS_ptrace, kPtraceAttach, static_cast<long>(getppid()), 0, 0);
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  for (int64_t i = 0; i < anvil_numel(&in[0]); ++i) y[i] = x[i] > 0 ? x[i] : 0;
  return 0;
}
