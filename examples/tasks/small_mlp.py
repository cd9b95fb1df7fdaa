# anvil-task: small MLP, Linear 64->128, ReLU, Linear 128->32, batch 16, float32
import torch
import torch.nn as nn


class Model(nn.Module):
    """Two linear layers with a ReLU between them."""

    def __init__(self, input_size: int, hidden_size: int, output_size: int):
        super().__init__()
        self.fc1 = nn.Linear(input_size, hidden_size)
        self.relu = nn.ReLU()
        self.fc2 = nn.Linear(hidden_size, output_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.relu(self.fc1(x)))


batch_size = 16
input_size = 64
hidden_size = 128
output_size = 32


def get_inputs():
    x = torch.randn(batch_size, input_size)
    return [x]


def get_init_inputs():
    return [input_size, hidden_size, output_size]
