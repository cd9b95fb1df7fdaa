# anvil-task: malformed: forward() raises on its inputs (matmul of 64 x 128 by 64 x 96)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


M = 64
K = 128
N = 96


def get_inputs():
    A = torch.randn(M, K)
    B = torch.randn(M, N)
    return [A, B]


def get_init_inputs():
    return []
