// anvil-expect: runtime_error
// anvil-class: D6
// anvil-static-rule: cpp.native_tamper
// anvil-about: reads the reference outputs from anvil's cache (the --prepared path in its own command line) with raw
// anvil-about: system call instructions no static check can name, and returns them; the sandbox (Landlock) must deny the read
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

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

namespace {
int g_call = 0;
std::string g_error;

long Open(const char* path) { return RawSyscall(SYS_openat, AT_FDCWD, reinterpret_cast<long>(path), O_RDONLY); }

// The value after --prepared in /proc/self/cmdline.
std::string PreparedDir() {
  long fd = Open("/proc/self/cmdline");
  if (fd < 0) return "";
  static char buf[1 << 16];
  long n = RawSyscall(SYS_read, fd, reinterpret_cast<long>(buf), sizeof(buf) - 1);
  RawSyscall(SYS_close, fd);
  if (n <= 0) return "";
  buf[n] = '\0';
  for (long i = 0; i < n;) {
    std::string arg(buf + i);
    i += static_cast<long>(arg.size()) + 1;
    if (arg == "--prepared" && i < n) return std::string(buf + i);
  }
  return "";
}
}  // namespace

extern "C" const char* anvil_last_error() { return g_error.c_str(); }

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void*) {
  const std::string path = PreparedDir() + "/trial_" + std::to_string(g_call++) + "/expected/out0.bin";
  long fd = Open(path.c_str());
  if (fd < 0) {
    g_error = "cannot read " + path + ": " + std::strerror(static_cast<int>(-fd));
    return 9;
  }
  const long bytes = anvil_numel(&out[0]) * 4;
  long got = RawSyscall(SYS_read, fd, reinterpret_cast<long>(out[0].data), bytes);
  RawSyscall(SYS_close, fd);
  return got == bytes ? 0 : 8;
}
