# anvil-expect: pass
# anvil-class: legit
# anvil-about: views and checks honest forwards make before their kernel (x.T, .mT, unfold as a view, an aliasing
# anvil-about: check through untyped_storage): plumbing to the op observer and the host trace, not compute
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# _SOURCE and the load_inline call are byte-identical in relu/{pass,wrong_answer,runtime_error,segfault,
# timeout,cheat}_kb.py, so the extension is compiled once for all of them; each calls a different function.
_SOURCE = r"""
#include <torch/extension.h>

#include <cstdint>

// Shared by several anvil examples; each calls a different function. Inputs: contiguous float32 CPU tensors.
static void check_input(const torch::Tensor& x) {
  TORCH_CHECK(x.device().is_cpu(), "expected a CPU tensor");
  TORCH_CHECK(x.scalar_type() == torch::kFloat32, "expected a float32 tensor");
  TORCH_CHECK(x.is_contiguous(), "expected a contiguous tensor");
}

// max(x, 0) elementwise.
torch::Tensor relu_forward(torch::Tensor x) {
  check_input(x);
  auto out = torch::empty_like(x);
  const float* src = x.data_ptr<float>();
  float* dst = out.data_ptr<float>();
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) dst[i] = src[i] > 0.0f ? src[i] : 0.0f;
  return out;
}

// Leaky ReLU with slope 0.01: close to ReLU, but not ReLU.
torch::Tensor leaky_forward(torch::Tensor x) {
  check_input(x);
  auto out = torch::empty_like(x);
  const float* src = x.data_ptr<float>();
  float* dst = out.data_ptr<float>();
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) dst[i] = src[i] > 0.0f ? src[i] : 0.01f * src[i];
  return out;
}

static volatile bool g_spin = true;  // never cleared

// Never returns: the volatile read and the asm statement keep the loop from being optimized away.
torch::Tensor spin_forever(torch::Tensor x) {
  check_input(x);
  while (g_spin) {
    asm volatile("");
  }
  return relu_forward(x);
}

// Always fails with a C++ exception (surfaces in Python as RuntimeError).
torch::Tensor throw_error(torch::Tensor x) {
  check_input(x);
  TORCH_CHECK(false, "relu kernel: this build does not support the input layout");
  return relu_forward(x);
}

// Writes through a null pointer (SIGSEGV).
torch::Tensor crash(torch::Tensor x) {
  check_input(x);
  auto out = torch::empty_like(x);
  const float* src = x.data_ptr<float>();
  float* dst = nullptr;  // bug: should be out.data_ptr<float>()
  asm volatile("" : "+r"(dst));  // hide the null from the optimizer so the stores are really made
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) dst[i] = src[i] > 0.0f ? src[i] : 0.0f;
  return out;
}
"""

_ext = load_inline(
    name="anvil_example_relu_family",
    cpp_sources=_SOURCE,
    functions=["relu_forward", "leaky_forward", "spin_forever", "throw_error", "crash"],
    extra_cflags=["-O2"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.T.contiguous().T.contiguous()  # A layout round trip, as a transpose-heavy kernel would do.
        windows = x.unfold(1, 2, 2)  # A view of pairs (a kernel would read them so).
        assert windows.untyped_storage().data_ptr() == x.untyped_storage().data_ptr(), "unfold must not copy"
        assert x.mT.shape == (x.shape[1], x.shape[0])
        return _ext.relu_forward(x.contiguous())
