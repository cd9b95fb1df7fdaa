# anvil-task: malformed: imports a module that does not exist
import torch
import torch.nn as nn
import anvil_no_such_module  # noqa: F401


class Model(nn.Module):
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
