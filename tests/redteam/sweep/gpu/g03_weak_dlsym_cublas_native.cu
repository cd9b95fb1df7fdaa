// anvil-expect: cheat
// anvil-class: A4
// anvil-task: mm512.py
// anvil-about: cuBLAS reached with dlopen/dlsym declared weak under asm labels (nm `w`, dropped by the symbol scan; no
// anvil-about: cublas name in the source, only strings): the already-loaded libcublas.so.13 does the product; a decoy
// anvil-about: own kernel runs too. Expected to fall to the kernel trace's vendor names (trace.vendor_kernel)
#include <cstdint>

#include <cuda_runtime.h>

#include "anvil/native.h"

extern "C" void* lib_handle(const char*, int) asm("dlopen") __attribute__((weak));
extern "C" void* lib_entry(void*, const char*) asm("dlsym") __attribute__((weak));

namespace {
using Create = int (*)(void**);
using SetStream = int (*)(void*, cudaStream_t);
using Gemm = int (*)(void*, int, int, int, int, int, const float*, const float*, int, const float*, int, const float*,
                     float*, int);

__global__ void decoy(float* c) {
  if (threadIdx.x == 0 && blockIdx.x == 0) c[0] = c[0];
}
}  // namespace

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void* stream) {
  static void* handle = nullptr;
  static Gemm gemm = nullptr;
  static SetStream set_stream = nullptr;
  if (n_in != 2 || n_out != 1) return 1;
  if (gemm == nullptr) {
    void* lib = lib_handle("libcublas.so.13", 0x2 | 0x4);
    if (lib == nullptr) lib = lib_handle("libcublas.so.13", 0x2);
    if (lib == nullptr) return 2;
    auto create = reinterpret_cast<Create>(lib_entry(lib, "cublasCreate_v2"));
    set_stream = reinterpret_cast<SetStream>(lib_entry(lib, "cublasSetStream_v2"));
    gemm = reinterpret_cast<Gemm>(lib_entry(lib, "cublasSgemm_v2"));
    if (create == nullptr || set_stream == nullptr || gemm == nullptr || create(&handle) != 0) return 3;
  }
  const int m = in[0].shape[0], k = in[0].shape[1], n = in[1].shape[1];
  const float one = 1.0f, zero = 0.0f;
  set_stream(handle, static_cast<cudaStream_t>(stream));
  // Row-major C = A B is column-major C^T = B^T A^T (CUBLAS_OP_N = 0).
  if (gemm(handle, 0, 0, n, m, k, &one, static_cast<const float*>(in[1].data), n,
           static_cast<const float*>(in[0].data), k, &zero, static_cast<float*>(out[0].data), n) != 0) {
    return 4;
  }
  decoy<<<1, 32, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<float*>(out[0].data));
  return 0;
}
