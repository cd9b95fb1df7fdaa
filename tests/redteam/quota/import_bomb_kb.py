# anvil-expect: runtime_error
# anvil-about: a memory bomb at import time, before any extension is built: 600 MiB of bytes written (bounded if no
# anvil-about: quota held); the import's memory quota stops it while anvil extracts the candidate's sources
import torch
import torch.nn as nn

_HOG = b"x" * (600 << 20)


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
