"""How long each KernelBench problem's Model takes to build on the CPU (its __init__ under seed 42, torch threads =
the machine's cores), the cost 88eea9e moved to the device: one line per problem (seconds, MiB of state, path),
then the total. Run it inside a memory quota: level 3's largest models hold 8 GiB.

    python3 bench/scripts/reference_init_cpu.py ../shared/kernelbench
"""

import glob
import importlib.util
import os
import sys
import time

import torch


def main(root):
    torch.set_num_threads(os.cpu_count() or 1)
    total = 0.0
    for path in sorted(glob.glob(os.path.join(root, "level*", "*.py"))):
        spec = importlib.util.spec_from_file_location("task", path)
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
            torch.manual_seed(42)
            init = module.get_init_inputs()
            start = time.perf_counter()
            with torch.no_grad():
                model = module.Model(*init)
            seconds = time.perf_counter() - start
            mib = sum(t.numel() * t.element_size() for t in model.state_dict().values()) / 2**20
            del model
        except Exception as e:  # noqa: BLE001 - a problem this machine cannot build: said, not counted
            print(f"error\t{type(e).__name__}\t{path}", flush=True)
            continue
        total += seconds
        print(f"{seconds:.3f}\t{mib:.1f}\t{path}", flush=True)
    print(f"total {total:.1f} s")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "../shared/kernelbench")
