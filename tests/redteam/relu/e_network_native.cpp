// anvil-expect: cheat
// anvil-class: E
// anvil-rule: sandbox.forbidden_syscall
// anvil-about: opens an IPv4 socket through a raw system call (to fetch an answer or leak the inputs); no network
// anvil-about: is allowed, and the seccomp filter kills the process at the attempt
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

#include "anvil/native.h"

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void*) {
  syscall(SYS_socket, AF_INET, SOCK_STREAM, 0);
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  for (int64_t i = 0; i < anvil_numel(&in[0]); ++i) y[i] = x[i] > 0 ? x[i] : 0;
  return 0;
}
