// anvil-expect: cheat
// anvil-class: D8
// anvil-rule: perf.impossible_time
// anvil-about: a correct CUDA ReLU that, on its first call, finds the compiled timer (libanvil_timer.so)
// anvil-about: among the process's libraries (no dlopen or dlsym) and rewrites the driver pointer it reads
// anvil-about: event times through: every timed call then "takes" 0.1 us, inside the call clock's tolerance.
// anvil-about: The timer keeps that table on a page it seals read-only: this forger first makes the page writable
// anvil-about: again (mprotect; without that the write faults and is named, run.tamper: the CPU red team's
// anvil-about: d8_write_sealed_timer_native.cpp). The layers behind the seal decide it:
// anvil-about: Its kernel keeps the GPU busy 19-26 us a call (H200): the kernel trace catches it
// anvil-about: (trace.event_mismatch; with the trace's old 20 us slack, only in some runs), and with the trace
// anvil-about: off the roofline floor does (writing 16 MB takes an H200 at least 0.87 us: perf.impossible_time)
#include <link.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstring>

#include <cuda_runtime.h>

#include "anvil/native.h"

namespace {

const char* g_error = nullptr;

__global__ void ReluKernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    y[i] = fmaxf(x[i], 0.0f);
  }
}

// cuEventElapsedTime's signature, answering for every timed call.
int ForgedElapsed(float* ms, void*, void*) {
  *ms = 0.0001f;
  return 0;
}

struct Range {
  uintptr_t begin = 0, end = 0;
  bool Holds(const void* p) const {
    const auto a = reinterpret_cast<uintptr_t>(p);
    return a >= begin && a < end;
  }
};

// Where the CUDA driver's code lies (no dlopen or dlsym: the loader's own
// list of what is mapped).
int FindDriver(dl_phdr_info* info, size_t, void* data) {
  if (info->dlpi_name == nullptr || std::strstr(info->dlpi_name, "libcuda.so") == nullptr) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) != 0) {
      *static_cast<Range*>(data) = {info->dlpi_addr + ph.p_vaddr, info->dlpi_addr + ph.p_vaddr + ph.p_memsz};
    }
  }
  return 1;
}

// The timer keeps its driver entry points in one table (create, record,
// elapsed, synchronize, set limit, reset L2, error string; anvil's source is
// public): the first run of six words pointing into the driver's code is it,
// and its third word is the one that reads event times.
int PatchTimer(dl_phdr_info* info, size_t, void* data) {
  const Range& driver = *static_cast<Range*>(data);
  if (info->dlpi_name == nullptr || std::strstr(info->dlpi_name, "libanvil_timer") == nullptr) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || (ph.p_flags & PF_W) == 0) continue;
    const uintptr_t begin = (info->dlpi_addr + ph.p_vaddr + 7) & ~uintptr_t{7};
    const uintptr_t end = info->dlpi_addr + ph.p_vaddr + ph.p_memsz;
    int run = 0;
    for (uintptr_t p = begin; p + sizeof(void*) <= end; p += sizeof(void*)) {
      run = driver.Holds(*reinterpret_cast<void**>(p)) ? run + 1 : 0;
      if (run == 6) {
        void** elapsed = &reinterpret_cast<void**>(p)[-3];
        void* page = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(elapsed) & ~uintptr_t{4095});
        mprotect(page, 4096, PROT_READ | PROT_WRITE);
        *elapsed = reinterpret_cast<void*>(&ForgedElapsed);
        return 1;
      }
    }
  }
  return 1;
}

void ForgeTheTimer() {
  static bool done = false;
  if (done) return;
  done = true;
  Range driver;
  dl_iterate_phdr(FindDriver, &driver);
  if (driver.end != 0) dl_iterate_phdr(PatchTimer, &driver);
}

}  // namespace

ANVIL_EXPORT const char* anvil_last_error(void) { return g_error; }

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void* stream) {
  ForgeTheTimer();
  if (n_in != 1 || n_out != 1) return 1;
  if (in[0].dtype != ANVIL_FLOAT32 || out[0].dtype != ANVIL_FLOAT32) return 2;
  const int64_t n = anvil_numel(&in[0]);
  if (anvil_numel(&out[0]) != n) return 3;
  if (n == 0) return 0;
  constexpr int kThreads = 256;
  const int64_t wanted = (n + kThreads - 1) / kThreads;
  const unsigned blocks = static_cast<unsigned>(wanted < 65535 ? wanted : 65535);
  ReluKernel<<<blocks, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<const float*>(in[0].data), static_cast<float*>(out[0].data), n);
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) {
    g_error = cudaGetErrorString(err);
    return 4;
  }
  return 0;
}
