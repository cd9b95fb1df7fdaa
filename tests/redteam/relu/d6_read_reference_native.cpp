// anvil-expect: runtime_error
// anvil-class: D6
// anvil-about: reads the reference outputs from anvil's cache (the --prepared path in its own command line) with raw
// anvil-about: system calls the static scan does not name, and returns them; the sandbox (Landlock) must deny the read
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "anvil/native.h"

namespace {
int g_call = 0;
std::string g_error;

long Open(const char* path) { return syscall(SYS_openat, AT_FDCWD, path, O_RDONLY); }

// The value after --prepared in /proc/self/cmdline.
std::string PreparedDir() {
  long fd = Open("/proc/self/cmdline");
  if (fd < 0) return "";
  static char buf[1 << 16];
  long n = syscall(SYS_read, fd, buf, sizeof(buf) - 1);
  syscall(SYS_close, fd);
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
    g_error = "cannot read " + path + ": " + std::strerror(errno);
    return 9;
  }
  const long bytes = anvil_numel(&out[0]) * 4;
  long got = syscall(SYS_read, fd, out[0].data, bytes);
  syscall(SYS_close, fd);
  return got == bytes ? 0 : 8;
}
