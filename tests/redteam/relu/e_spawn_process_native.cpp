// anvil-expect: cheat
// anvil-class: E
// anvil-rule: sandbox.forbidden_syscall
// anvil-static-rule: cpp.native_tamper
// anvil-about: forks a helper process through a raw clone system call (a worker that would outlive the deadline or
// anvil-about: finish the work after forward returns); process creation is forbidden and kills the candidate
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

#include "anvil/native.h"

// A raw system call without the libc wrapper (x86_64): neither the source scan nor the built library's
// symbol table names it, so only the sandbox can stop it.
static long RawSyscall(long n, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0) {
  long ret;
  register long r10 asm("r10") = d;
  register long r8 asm("r8") = e;
  asm volatile(".byte 0x0f, 0x05"  // the syscall instruction, as bytes
               : "=a"(ret) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8) : "rcx", "r11", "memory");
  return ret;
}

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void*) {
  long pid = RawSyscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
  if (pid == 0) RawSyscall(SYS_exit, 0);
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  for (int64_t i = 0; i < anvil_numel(&in[0]); ++i) y[i] = x[i] > 0 ? x[i] : 0;
  return 0;
}
