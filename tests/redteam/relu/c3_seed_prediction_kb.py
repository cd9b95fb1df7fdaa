# anvil-expect: wrong_answer
# anvil-class: C3
# anvil-about: seed prediction: ignores its input and regenerates "the test input" from KernelBench's public seed
# anvil-about: (42, then 0..4 per trial), running its own ReLU kernel on that; anvil's trial seeds are secret
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_ext = load_inline(name="anvil_redteam_seed", functions=["relu_forward"], cpp_sources=r"""
torch::Tensor relu_forward(torch::Tensor x) {
  auto out = torch::empty_like(x);
  const float* src = x.data_ptr<float>();
  float* dst = out.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) dst[i] = src[i] > 0.0f ? src[i] : 0.0f;
  return out;
}
""")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        seed = 42 if self.calls == 0 else self.calls - 1
        self.calls += 1
        torch.manual_seed(seed)
        guess = torch.randn(x.shape, dtype=x.dtype, device=x.device)
        return _ext.relu_forward(guess)
