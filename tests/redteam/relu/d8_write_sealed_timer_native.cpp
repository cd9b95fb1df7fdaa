// anvil-expect: cheat
// anvil-class: D8
// anvil-rule: run.tamper
// anvil-static-rule: cpp.native_tamper
// anvil-about: the GPU red team's event-time forger (tests/gpu/redteam/d8_forged_event_native.cu) on the CPU: it
// anvil-about: finds libanvil_timer.so among the loaded libraries (no dlopen or dlsym), finds the page of its
// anvil-about: writable segment that the kernel refuses to write into (a pipe read there fails with EFAULT: the
// anvil-about: timer's sealed state) and writes to it; the write faults, and the timer's fault handler names it
#include <errno.h>
#include <link.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

#include "anvil/native.h"

namespace {

constexpr uintptr_t kPage = 4096;

// True when the kernel cannot write one byte at `p` (a read-only page).
bool Unwritable(uintptr_t p) {
  int fds[2];
  if (pipe(fds) != 0) return false;
  const char byte = 1;
  bool refused = false;
  if (write(fds[1], &byte, 1) == 1) refused = read(fds[0], reinterpret_cast<void*>(p), 1) < 0 && errno == EFAULT;
  close(fds[0]);
  close(fds[1]);
  return refused;
}

int WriteSealedPage(dl_phdr_info* info, size_t, void* found) {
  if (info->dlpi_name == nullptr || std::strstr(info->dlpi_name, "libanvil_timer") == nullptr) return 0;
  uintptr_t relro_begin = 0, relro_end = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_GNU_RELRO) {
      relro_begin = info->dlpi_addr + ph.p_vaddr;
      relro_end = (relro_begin + ph.p_memsz + kPage - 1) & ~(kPage - 1);
    }
  }
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || (ph.p_flags & PF_W) == 0) continue;
    const uintptr_t begin = (info->dlpi_addr + ph.p_vaddr + kPage - 1) & ~(kPage - 1);
    const uintptr_t end = info->dlpi_addr + ph.p_vaddr + ph.p_memsz;
    for (uintptr_t p = begin; p < end; p += kPage) {
      if (p >= relro_begin && p < relro_end) continue;
      if (Unwritable(p)) {
        *static_cast<bool*>(found) = true;
        // The timer's first word: the driver's event-create entry. The write faults.
        *reinterpret_cast<volatile uintptr_t*>(p) = 0;
        return 1;
      }
    }
  }
  return 1;
}

bool g_tried = false;

}  // namespace

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void* /*stream*/) {
  if (!g_tried) {
    g_tried = true;
    bool found = false;
    dl_iterate_phdr(WriteSealedPage, &found);
    if (!found) return 7;  // No sealed page: the test fails on the status.
  }
  if (n_in != 1 || n_out != 1) return 1;
  const int64_t n = anvil_numel(&in[0]);
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  return 0;
}
