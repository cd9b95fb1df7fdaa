# anvil-task: a learned row added to a tiny multiple of the input: every output row is nearly the bias
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(1024))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bias + 1e-6 * x


def get_inputs():
    return [torch.randn(16, 1024)]


def get_init_inputs():
    return []
