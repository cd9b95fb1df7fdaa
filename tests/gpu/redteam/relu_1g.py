# anvil-task: elementwise ReLU on a 16384 x 16384 float32 tensor (1 GiB in, 1 GiB out): sized for the device-memory
# hog test (tests/gpu/test_gpu_device_hog.py), where 1 GiB of free device memory is too little to judge it
import torch
import torch.nn as nn


class Model(nn.Module):
    """Applies ReLU elementwise."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


rows = 16384
cols = 16384


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
