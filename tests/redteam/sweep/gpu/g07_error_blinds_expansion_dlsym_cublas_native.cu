// anvil-expect: cheat
// anvil-class: A4
// anvil-task: mm512.py
// anvil-about: g03 with plain dlopen/dlsym hidden by #define, and the scan's `g++ -E` made to fail by
// anvil-about: `#if defined(__CUDACC__) && !defined(__CUDACC_VER_MAJOR__) #error` (the scan defines __CUDACC__, nvcc also
// anvil-about: defines __CUDACC_VER_MAJOR__): no expanded scan; `.cu` artifacts get no libc-level symbol scan (U dlsym
// anvil-about: is not looked at). Expected to fall to trace.vendor_kernel on a GPU
#include <cstdint>

#include <cuda_runtime.h>

#include "anvil/native.h"

#if defined(__CUDACC__) && !defined(__CUDACC_VER_MAJOR__)
#error "built by nvcc only"
#endif
#include <dlfcn.h>
#define lib_handle dlopen
#define lib_entry dlsym

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
