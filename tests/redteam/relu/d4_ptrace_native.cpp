// anvil-expect: cheat
// anvil-class: D4
// anvil-rule: sandbox.forbidden_syscall
// anvil-static-rule: cpp.native_tamper
// anvil-about: attaches to its parent with ptrace through a raw system call instruction spelled as its bytes (no name the
// anvil-about: static scan knows), the first step of patching the harness; the sandbox's seccomp filter must kill it on
// anvil-about: the spot
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

#include "anvil/native.h"

// A raw system call without the libc wrapper (x86_64), the `syscall` instruction written as its bytes (0f 05):
// neither the source scan (which names `syscall` in inline assembly) nor the built library's symbol table sees
// it, so only the sandbox can stop it.
static long RawSyscall(long n, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0) {
  long ret;
  register long r10 asm("r10") = d;
  register long r8 asm("r8") = e;
  asm volatile(".byte 0x0f, 0x05" : "=a"(ret) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8)
               : "rcx", "r11", "memory");
  return ret;
}

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void*) {
  const long kPtraceAttach = 16;
  RawSyscall(SYS_ptrace, kPtraceAttach, static_cast<long>(getppid()), 0, 0);
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  for (int64_t i = 0; i < anvil_numel(&in[0]); ++i) y[i] = x[i] > 0 ? x[i] : 0;
  return 0;
}
