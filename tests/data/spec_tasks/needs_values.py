# A reference whose forward needs its inputs' values (a data-dependent shape): its spec cannot be derived on the
# meta device, and anvil says so instead of materialising the tensors.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[: int(x.abs().argmax().item()) + 1]


def get_inputs():
    return [torch.randn(64)]


def get_init_inputs():
    return []
