# anvil-expect: compile_error
# anvil-about: the CUDA kernel calls warpReduceSum, a helper that was never defined (nvcc: identifier is undefined)
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# _CPP_SOURCE, _CUDA_SOURCE and the load_inline call below are byte-identical in every file of
# tests/gpu/kernelbench_run that builds the extension "anvil_gpu_mse_compile_error", so one build serves them
# all; each file calls the functions its problem needs.
_CPP_SOURCE = r"""
torch::Tensor mse_loss_forward(torch::Tensor pred, torch::Tensor targ);
"""

_CUDA_SOURCE = r"""
#include <torch/types.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <vector>

// Squared error summed per block, then accumulated into out[0] with one atomicAdd per block.
__global__ void SquaredErrorSumKernel(const float* __restrict__ pred, const float* __restrict__ targ, int64_t n,
                                      float* __restrict__ out) {
  float acc = 0.0f;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float d = pred[i] - targ[i];
    acc += d * d;
  }
  acc = warpReduceSum(acc);  // bug: the helper was never written
  if ((threadIdx.x & 31) == 0) atomicAdd(out, acc);
}

__global__ void DivideKernel(float* __restrict__ out, float n) { out[0] /= n; }

torch::Tensor mse_loss_forward(torch::Tensor pred, torch::Tensor targ) {
  TORCH_CHECK(pred.is_cuda() && pred.scalar_type() == torch::kFloat32 && pred.is_contiguous(), "bad predictions");
  TORCH_CHECK(targ.sizes() == pred.sizes() && targ.scalar_type() == torch::kFloat32 && targ.is_contiguous(),
              "bad targets");
  auto out = torch::zeros({}, pred.options());
  const int64_t n = pred.numel();
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  SquaredErrorSumKernel<<<1024, 256, 0, stream>>>(pred.data_ptr<float>(), targ.data_ptr<float>(), n,
                                                 out.data_ptr<float>());
  DivideKernel<<<1, 1, 0, stream>>>(out.data_ptr<float>(), static_cast<float>(n));
  return out;
}
"""

_ext = load_inline(
    name="anvil_gpu_mse_compile_error",
    cpp_sources=_CPP_SOURCE,
    cuda_sources=_CUDA_SOURCE,
    functions=["mse_loss_forward"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        return _ext.mse_loss_forward(predictions.contiguous(), targets.contiguous())
