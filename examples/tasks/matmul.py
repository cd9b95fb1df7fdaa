# anvil-task: matrix multiplication C = A @ B with A 64 x 128 and B 128 x 96, float32
import torch
import torch.nn as nn


class Model(nn.Module):
    """Multiplies two matrices."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


M = 64
K = 128
N = 96


def get_inputs():
    A = torch.randn(M, K)
    B = torch.randn(K, N)
    return [A, B]


def get_init_inputs():
    return []
