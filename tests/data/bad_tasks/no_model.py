# anvil-task: malformed: defines no class Model (the network is called Net), so anvil cannot load it
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


batch_size = 16
dim = 1024


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
