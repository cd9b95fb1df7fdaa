# anvil-task: softmax over dim 1 of a 32 x 512 float32 tensor
import torch
import torch.nn as nn


class Model(nn.Module):
    """Applies softmax over dimension 1."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


batch_size = 32
dim = 512


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
