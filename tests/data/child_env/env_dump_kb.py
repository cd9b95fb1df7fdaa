# anvil-expect: runtime_error
# anvil-about: puts its environment (os.environ and /proc/self/environ: every name, and each entry that holds the
# marker `anvil-env-probe`) into its own error message, which the verdict's feedback carries verbatim; anvil's own
# secrets (a model API key) must not be among them (tests/cli/test_child_environment.py)
import os

import torch
import torch.nn as nn

MARKER = "anvil-env-probe"


def _environment():
    entries = [f"{k}={v}" for k, v in os.environ.items()]
    try:
        with open("/proc/self/environ", "rb") as f:
            raw = [kv for kv in f.read().decode(errors="replace").split("\0") if kv]
    except OSError as e:
        raw = [f"unreadable={e.errno}"]
    names = ",".join(sorted(k for k in os.environ))
    proc_names = ",".join(sorted(kv.split("=", 1)[0] for kv in raw))
    marked = " ".join(kv for kv in entries + raw if MARKER in kv)
    return f"names: {names} | proc: {proc_names} | marked: {marked}"


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise RuntimeError(_environment())
