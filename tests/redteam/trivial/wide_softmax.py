# anvil-task: softmax over 20000 columns of small inputs: every output is near 5e-5, under fp32's atol of 1e-4
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


def get_inputs():
    return [0.1 * torch.randn(8, 20000)]


def get_init_inputs():
    return []
