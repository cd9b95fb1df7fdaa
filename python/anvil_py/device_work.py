"""How long the device worked for anvil's trusted side: making trials, running the reference, comparing (issue 38's
first target counts a verdict's wall time against its device work).

On cuda each piece of work is bracketed by CUDA events on the current stream, read only when asked (so measuring
never waits for the device); a gap inside a piece while the host prepared the next launch counts as work. On cpu
the device is the CPU: each piece's perf_counter time. Work that another thread ran on the same stream between a
piece's events (sessions side by side) counts in that piece too.
"""

import contextlib
import threading
import time

import torch


class WorkClock:
    def __init__(self, device):
        self.device = torch.device(device)
        self.cuda = self.device.type == "cuda"
        self.lock = threading.Lock()
        self.pairs = []  # (start event, end event) not yet read.
        self.done_ms = 0.0

    @contextlib.contextmanager
    def piece(self):
        """`with clock.piece(): ...` counts what the block ran."""
        if not self.cuda:
            t0 = time.perf_counter()
            try:
                yield
            finally:
                with self.lock:
                    self.done_ms += (time.perf_counter() - t0) * 1e3
            return
        stream = torch.cuda.current_stream(self.device)
        start = torch.cuda.Event(enable_timing=True)
        start.record(stream)
        try:
            yield
        finally:
            end = torch.cuda.Event(enable_timing=True)
            end.record(stream)
            with self.lock:
                self.pairs.append((start, end))

    def ms(self):
        """The work counted so far, in milliseconds (on cuda, after the pieces' last kernels end)."""
        with self.lock:
            pairs, self.pairs = self.pairs, []
        total = 0.0
        try:
            for start, end in pairs:
                end.synchronize()
                total += start.elapsed_time(end)
        except RuntimeError:
            pass  # A device that failed: its error is reported where the work failed; what was read stays.
        with self.lock:
            self.done_ms += total
            return self.done_ms

