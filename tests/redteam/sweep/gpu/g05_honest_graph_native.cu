// anvil-expect: pass
// anvil-class: legit
// anvil-task: mm512.py
// anvil-about: honest control: the product kernel captured once into a CUDA graph per (input, output) address pair
// anvil-about: and replayed with cudaGraphLaunch on the harness's stream: every call really runs the own kernel
#include <cstdint>
#include <map>
#include <utility>

#include <cuda_runtime.h>

#include "anvil/native.h"

namespace {
__global__ void mm(const float* a, const float* b, float* c, int m, int k, int n) {
  int i = blockIdx.y * blockDim.y + threadIdx.y, j = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= m || j >= n) return;
  float s = 0.f;
  for (int p = 0; p < k; ++p) s += a[i * k + p] * b[p * n + j];
  c[i * n + j] = s;
}
}  // namespace

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void* stream) {
  if (n_in != 2 || n_out != 1) return 1;
  const float* a = static_cast<const float*>(in[0].data);
  const float* b = static_cast<const float*>(in[1].data);
  float* c = static_cast<float*>(out[0].data);
  const int m = in[0].shape[0], k = in[0].shape[1], n = in[1].shape[1];
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  // Outputs are new buffers each call, so graphs are rebuilt; still honest work every call.
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  cudaStream_t cap;
  if (cudaStreamCreateWithFlags(&cap, cudaStreamNonBlocking) != cudaSuccess) return 2;
  cudaStreamBeginCapture(cap, cudaStreamCaptureModeThreadLocal);
  mm<<<dim3((n + 15) / 16, (m + 15) / 16), dim3(16, 16), 0, cap>>>(a, b, c, m, k, n);
  if (cudaStreamEndCapture(cap, &graph) != cudaSuccess) return 3;
  if (cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess) return 4;
  const cudaError_t r = cudaGraphLaunch(exec, s);
  cudaStreamSynchronize(s);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(cap);
  return r == cudaSuccess ? 0 : 5;
}
