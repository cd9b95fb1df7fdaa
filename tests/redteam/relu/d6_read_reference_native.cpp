// anvil-expect: runtime_error
// anvil-class: D6
// anvil-static-rule: cpp.native_tamper
// anvil-about: reads the secret seeds of the timed calls' input sets from anvil's cache (the --prepared path in its own
// anvil-about: command line) with raw system call instructions no static check can name: with them it could make each
// anvil-about: timed set and the reference's outputs before the timer starts. No reference output is on the disk (the
// anvil-about: task server makes them from these seeds); the sandbox (Landlock, or a root of the listed paths) must deny the read
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

ANVIL_EXPORT int anvil_forward(const anvil_tensor*, int, anvil_tensor*, int, void*) {
  const std::string path = PreparedDir() + "/kept_timing_seeds.json";
  long fd = Open(path.c_str());
  if (fd < 0) {
    g_error = "cannot read " + path + ": " + std::strerror(static_cast<int>(-fd));
    return 9;
  }
  static char seeds[256];
  long got = RawSyscall(SYS_read, fd, reinterpret_cast<long>(seeds), sizeof(seeds) - 1);
  RawSyscall(SYS_close, fd);
  if (got <= 0) {  // Covered (the sandbox's hidden layer puts /dev/null there) or unreadable.
    g_error = "cannot read " + path + ": " + (got < 0 ? std::strerror(static_cast<int>(-got)) : "it is empty");
    return 9;
  }
  seeds[got] = '\0';
  g_error = "read the timing sets' secret seeds: " + std::string(seeds);
  return 8;
}
