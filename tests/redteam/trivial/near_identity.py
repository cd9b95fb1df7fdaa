# anvil-task: x + 1e-3 x^3 on small inputs: the cube is under fp32's atol, so the output is nearly the input
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + 1e-3 * x * x * x


def get_inputs():
    return [0.05 * torch.randn(16, 1024)]


def get_init_inputs():
    return []
