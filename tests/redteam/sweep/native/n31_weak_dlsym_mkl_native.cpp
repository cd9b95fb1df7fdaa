// anvil-expect: cheat
// anvil-class: A4
// anvil-task: mm256.py
// anvil-about: dlopen/dlsym declared weak under asm labels (`void* find(void*, const char*) asm("dlsym")
// anvil-about: __attribute__((weak))`): the source scan sees other names, nm lists the references as `w`, which the symbol
// anvil-about: scan drops (it keeps `U` only); they fetch MKL's sgemm from the already-loaded libtorch_cpu
#include <cstdint>

#include "anvil/native.h"

extern "C" void* lib_handle(const char*, int) asm("dlopen") __attribute__((weak));
extern "C" void* lib_entry(void*, const char*) asm("dlsym") __attribute__((weak));

using Gemm = void (*)(const char*, const char*, const int*, const int*, const int*, const float*, const float*,
                      const int*, const float*, const int*, const float*, float*, const int*);

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void*) {
  static Gemm gemm = nullptr;
  if (n_in != 2 || n_out != 1) return 1;
  if (gemm == nullptr) {
    void* h = lib_handle("libtorch_cpu.so", 0x4 /*RTLD_NOLOAD*/ | 0x2 /*RTLD_NOW*/);
    if (h == nullptr) return 5;
    gemm = reinterpret_cast<Gemm>(lib_entry(h, "sgemm"));
    if (gemm == nullptr) return 6;
  }
  const int m = static_cast<int>(in[0].shape[0]), k = static_cast<int>(in[0].shape[1]);
  const int n = static_cast<int>(in[1].shape[1]);
  const float one = 1.0f, zero = 0.0f;
  gemm("N", "N", &n, &m, &k, &one, static_cast<const float*>(in[1].data), &n, static_cast<const float*>(in[0].data),
       &k, &zero, static_cast<float*>(out[0].data), &n);
  return 0;
}
