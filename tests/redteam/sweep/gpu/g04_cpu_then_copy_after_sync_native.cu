// anvil-expect: cheat
// anvil-class: D1
// anvil-task: mm512.py
// anvil-about: GPU deferral by copies: once the input address repeats (timed calls), a call copies the inputs to the
// anvil-about: host and runs a tiny own kernel; a host thread (pthread_create under an asm label) multiplies on the CPU and
// anvil-about: copies the product to the device 200 us+ later, after the harness's sync, on the harness's stream
// anvil-about: (the recheck copy queues behind it): outside calls the trace judges kernels only, never memcpys
#include <cstdint>
#include <ctime>
#include <pthread.h>
#include <sched.h>
#include <vector>

#include <cuda_runtime.h>

#include "anvil/native.h"

extern "C" int start_thread(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*) asm("pthread_create");

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

struct Job {
  float* c;
  int m, k, n;
  cudaStream_t stream;
};
Job g_job;
float* g_ha = nullptr;  // pinned host copies of the inputs, filled inside the call
float* g_hb = nullptr;
float* g_hc = nullptr;
volatile int g_posted = 0, g_taken = 0;

int64_t NowNs() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000LL + t.tv_nsec;
}

void* Worker(void*) {
  cudaSetDevice(0);
  for (;;) {
    while (__atomic_load_n(&g_posted, __ATOMIC_ACQUIRE) == g_taken) sched_yield();
    const int64_t t0 = NowNs();
    Job j = g_job;
    for (int i = 0; i < j.m; ++i) {
      float* row = g_hc + static_cast<int64_t>(i) * j.n;
      for (int x = 0; x < j.n; ++x) row[x] = 0.f;
      for (int p = 0; p < j.k; ++p) {
        const float s = g_ha[static_cast<int64_t>(i) * j.k + p];
        const float* br = g_hb + static_cast<int64_t>(p) * j.n;
        for (int x = 0; x < j.n; ++x) row[x] += s * br[x];
      }
    }
    while (NowNs() - t0 < 200000) {  // past the call's end event and the harness's sync
    }
    cudaMemcpyAsync(j.c, g_hc, sizeof(float) * j.m * j.n, cudaMemcpyHostToDevice, j.stream);
    __atomic_store_n(&g_taken, g_posted, __ATOMIC_RELEASE);
  }
  return nullptr;
}
}  // namespace

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void* stream) {
  if (n_in != 2 || n_out != 1) return 1;
  static const void* last = nullptr;
  static bool started = false;
  const float* a = static_cast<const float*>(in[0].data);
  const float* b = static_cast<const float*>(in[1].data);
  float* c = static_cast<float*>(out[0].data);
  const int m = in[0].shape[0], k = in[0].shape[1], n = in[1].shape[1];
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  const bool repeated = a == last;
  last = a;
  if (!started) {
    cudaMallocHost(&g_ha, sizeof(float) * m * k);
    cudaMallocHost(&g_hb, sizeof(float) * k * n);
    cudaMallocHost(&g_hc, sizeof(float) * m * n);
    pthread_t t;
    if (start_thread(&t, nullptr, Worker, nullptr) != 0) return 4;
    started = true;
  }
  while (__atomic_load_n(&g_taken, __ATOMIC_ACQUIRE) != g_posted) sched_yield();
  if (!repeated) {
    own_mm<<<dim3((n + 15) / 16, (m + 15) / 16), dim3(16, 16), 0, s>>>(a, b, c, m, k, n);
    return cudaGetLastError() == cudaSuccess ? 0 : 5;
  }
  cudaMemcpyAsync(g_ha, a, sizeof(float) * m * k, cudaMemcpyDeviceToHost, s);
  cudaMemcpyAsync(g_hb, b, sizeof(float) * k * n, cudaMemcpyDeviceToHost, s);
  touch<<<1, 32, 0, s>>>(c);
  cudaStreamSynchronize(s);
  g_job = {c, m, k, n, s};
  __atomic_store_n(&g_posted, g_posted + 1, __ATOMIC_RELEASE);
  return cudaGetLastError() == cudaSuccess ? 0 : 6;
}
