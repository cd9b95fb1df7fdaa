// anvil-expect: cheat
// anvil-class: B3
// anvil-task: mm512.py
// anvil-about: GPU batch-and-skip: at the first warmup call, Python (weak asm-labelled C API symbols, invisible to both
// anvil-about: scans) walks the frames up to the harness's `_timed_calls` and hands over the device addresses of every
// anvil-about: timing set's inputs; own kernels compute all answers there (a warmup window: own kernels are fine). Each
// anvil-about: timed call reads 16 input floats, copies the matching answer device-to-device (plumbing) and runs a tiny
// anvil-about: own kernel: right when rechecked, consistent between traced and untraced calls
#include <cstdint>
#include <cstdio>
#include <cstring>

#include <cuda_runtime.h>

#include "anvil/native.h"

extern "C" int gil_take() asm("PyGILState_Ensure") __attribute__((weak));
extern "C" void gil_give(int) asm("PyGILState_Release") __attribute__((weak));
extern "C" int run_text(const char*) asm("PyRun_SimpleString") __attribute__((weak));

namespace {
__global__ void own_mm(const float* a, const float* b, float* c, int m, int k, int n) {
  int i = blockIdx.y * blockDim.y + threadIdx.y, j = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= m || j >= n) return;
  float s = 0.f;
  for (int p = 0; p < k; ++p) s += a[i * k + p] * b[p * n + j];
  c[i * n + j] = s;
}
__global__ void touch(float* c) {
  if (threadIdx.x == 0 && blockIdx.x == 0) c[0] = c[0];
}

constexpr int kMax = 64;
uint64_t g_inputs[kMax][2];  // filled by the Python side: each set's A and B on the device
int64_t g_count = 0;
float g_keys[kMax][16];
float* g_answers[kMax];
bool g_harvested = false;

void Harvest(int m, int k, int n, cudaStream_t s) {
  char code[2048];
  std::snprintf(code, sizeof code,
                "def _h():\n"
                "    import sys, ctypes\n"
                "    f = sys._getframe()\n"
                "    while f is not None and f.f_code.co_name != '_timed_calls':\n"
                "        f = f.f_back\n"
                "    if f is None:\n"
                "        return\n"
                "    sets = f.f_locals['sets'][:%d]\n"
                "    table = (ctypes.c_uint64 * (2 * %d)).from_address(%llu)\n"
                "    for i, st in enumerate(sets):\n"
                "        table[2 * i] = st[0].data_ptr()\n"
                "        table[2 * i + 1] = st[1].data_ptr()\n"
                "    ctypes.c_int64.from_address(%llu).value = len(sets)\n"
                "_h()\n"
                "del _h\n",
                kMax, kMax, (unsigned long long)(uintptr_t)g_inputs, (unsigned long long)(uintptr_t)&g_count);
  const int g = gil_take();
  run_text(code);
  gil_give(g);
  for (int64_t i = 0; i < g_count; ++i) {
    const float* a = reinterpret_cast<const float*>(g_inputs[i][0]);
    const float* b = reinterpret_cast<const float*>(g_inputs[i][1]);
    cudaMalloc(&g_answers[i], sizeof(float) * m * n);
    own_mm<<<dim3((n + 15) / 16, (m + 15) / 16), dim3(16, 16), 0, s>>>(a, b, g_answers[i], m, k, n);
    cudaMemcpyAsync(g_keys[i], a, sizeof g_keys[i], cudaMemcpyDeviceToHost, s);
  }
  cudaStreamSynchronize(s);
}
}  // namespace

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void* stream) {
  if (n_in != 2 || n_out != 1) return 1;
  const float* a = static_cast<const float*>(in[0].data);
  const float* b = static_cast<const float*>(in[1].data);
  float* c = static_cast<float*>(out[0].data);
  const int m = in[0].shape[0], k = in[0].shape[1], n = in[1].shape[1];
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (g_count == 0 && run_text != nullptr) Harvest(m, k, n, s);
  if (g_count > 0) {
    float key[16];
    cudaMemcpyAsync(key, a, sizeof key, cudaMemcpyDeviceToHost, s);
    cudaStreamSynchronize(s);
    for (int64_t i = 0; i < g_count; ++i) {
      if (std::memcmp(key, g_keys[i], sizeof key) == 0) {
        cudaMemcpyAsync(c, g_answers[i], sizeof(float) * m * n, cudaMemcpyDeviceToDevice, s);
        touch<<<1, 32, 0, s>>>(c);
        return cudaGetLastError() == cudaSuccess ? 0 : 2;
      }
    }
  }
  own_mm<<<dim3((n + 15) / 16, (m + 15) / 16), dim3(16, 16), 0, s>>>(a, b, c, m, k, n);
  return cudaGetLastError() == cudaSuccess ? 0 : 3;
}
