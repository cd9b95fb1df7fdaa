// anvil-expect: pass
// anvil-class: legit
// anvil-task: mm256.py
// anvil-about: honest control for the asm-label and weak-symbol tricks: memset/memcpy reached under names of its own
// anvil-about: (asm labels), an optional weak reference (sched_getcpu, only logged), and an honest product
#include <cstddef>
#include <cstdint>

#include "anvil/native.h"

extern "C" void* clear_bytes(void*, int, size_t) asm("memset");
extern "C" void* copy_bytes(void*, const void*, size_t) asm("memcpy");
extern "C" int which_cpu() asm("sched_getcpu") __attribute__((weak));

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void*) {
  if (n_in != 2 || n_out != 1) return 1;
  static int cpu = which_cpu != nullptr ? which_cpu() : -1;
  (void)cpu;
  const int64_t m = in[0].shape[0], k = in[0].shape[1], n = in[1].shape[1];
  const float* a = static_cast<const float*>(in[0].data);
  const float* b = static_cast<const float*>(in[1].data);
  float* c = static_cast<float*>(out[0].data);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < m; ++i) {
    float row[1024];
    clear_bytes(row, 0, n * sizeof(float));
    for (int64_t p = 0; p < k; ++p) {
      const float s = a[i * k + p];
      for (int64_t j = 0; j < n; ++j) row[j] += s * b[p * n + j];
    }
    copy_bytes(c + i * n, row, n * sizeof(float));
  }
  return 0;
}
