# anvil-expect: timeout
# anvil-about: its kernel never returns (any task)
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# The same source and load_inline call in every generic candidate of bench/model_loop/: built once for all.
_SOURCE = r"""
#include <torch/extension.h>

#include <cstring>

// A tensor shaped like the first input, all zero bytes: the right answer for no task of the bench.
torch::Tensor zeros_like_first(torch::Tensor x) {
  auto out = torch::empty_like(x);
  std::memset(out.data_ptr(), 0, out.nbytes());
  return out;
}

// Fails with a C++ exception (a RuntimeError in Python).
torch::Tensor throw_error(torch::Tensor x) {
  TORCH_CHECK(false, "generic kernel: this layout is not supported");
  return x;
}

static volatile bool g_spin = true;  // Never cleared.

// Never returns.
torch::Tensor spin_forever(torch::Tensor x) {
  while (g_spin) {
    asm volatile("");
  }
  return x;
}
"""

_ext = load_inline(name="anvil_bench_generic", cpp_sources=_SOURCE,
                   functions=["zeros_like_first", "throw_error", "spin_forever"], extra_cflags=["-O2"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, *inputs):
        first = next(x for x in inputs if torch.is_tensor(x))
        return _ext.spin_forever(first.contiguous())
