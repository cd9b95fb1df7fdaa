"""Timing one callable: warmup, then timed calls with robust statistics.

On cuda every timed call is bracketed by CUDA events after an L2 flush of twice
the L2 size; on cpu by perf_counter_ns. Returns the raw times in milliseconds;
the engine computes statistics (so they cannot be forged here).
"""

import time

import torch


class Timer:
    def __init__(self, device):
        self.device = torch.device(device)
        self.flush = None
        if self.device.type == "cuda":
            l2 = torch.cuda.get_device_properties(self.device).L2_cache_size
            self.flush = torch.empty(max(2 * l2, 1 << 20) // 4, dtype=torch.int32, device=self.device)

    def sync(self):
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def time(self, fn, warmup, iters, before_each=None):
        for _ in range(warmup):
            if before_each:
                before_each()
            fn()
            self.sync()
        times = []
        for _ in range(iters):
            if before_each:
                before_each()
            if self.device.type == "cuda":
                self.flush.zero_()
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                start.record()
                fn()
                end.record()
                torch.cuda.synchronize(self.device)
                times.append(start.elapsed_time(end))
            else:
                t0 = time.perf_counter_ns()
                fn()
                times.append((time.perf_counter_ns() - t0) / 1e6)
        return times
