// anvil-expect: cheat
// anvil-class: E
// anvil-rule: sandbox.forbidden_syscall
// anvil-static-rule: cpp.native_tamper
// anvil-about: opens an IPv4 socket through a raw system call instruction (to fetch an answer or leak the inputs); no network
// anvil-about: is allowed, and the seccomp filter kills the process at the attempt
#include <sys/socket.h>
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
  RawSyscall(SYS_socket, AF_INET, SOCK_STREAM, 0);
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  for (int64_t i = 0; i < anvil_numel(&in[0]); ++i) y[i] = x[i] > 0 ? x[i] : 0;
  return 0;
}
