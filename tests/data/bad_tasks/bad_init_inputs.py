# anvil-task: malformed: get_init_inputs() raises
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x) * self.scale


def get_inputs():
    return [torch.randn(16, 1024)]


def get_init_inputs():
    raise ValueError("anvil_bad_init: no scale for this model")
