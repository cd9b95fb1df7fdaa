"""How long a full garbage collection takes in a process where torch.compile ran, before and after gc.freeze()
(bench/results/all_problems_h100_call8.md: the task server collected at the end of every baseline). On the CPU:

    .venv/bin/python bench/scripts/gc_walk_cpu.py

Each round compiles a small model, calls it, drops the compiled code (torch._dynamo.reset) and collects; it prints
the compile's and the collection's seconds, the objects the collection freed and the objects still tracked.
"""

import gc
import time

import torch


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(64, 64)

    def forward(self, x):
        return torch.relu(self.linear(x)) * 2 + 1


def round_():
    compiled = torch.compile(Model())
    began = time.monotonic()
    compiled(torch.randn(8, 64))
    compile_s = time.monotonic() - began
    torch._dynamo.reset()
    del compiled
    began = time.monotonic()
    freed = gc.collect()
    return {"compile_s": round(compile_s, 3), "collect_s": round(time.monotonic() - began, 4), "freed": freed,
            "tracked": len(gc.get_objects())}


def main():
    gc.collect()
    gc.freeze()  # As the task server does at its start.
    for _ in range(3):
        print("walks all:", round_())
    gc.freeze()
    print("frozen:", gc.get_freeze_count())
    for _ in range(3):
        print("after freeze:", round_())


if __name__ == "__main__":
    main()
