# anvil-expect: cheat
# anvil-about: no kernel at all: PyTorch does the work (any task whose first input is the output's shape)
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, *inputs):
        return torch.relu(inputs[0])
