"""Timing one callable: warmup, then timed calls with robust statistics.

On cuda every timed call is bracketed by CUDA events after an L2 flush of twice
the L2 size; on cpu by perf_counter_ns. Returns the raw times in milliseconds;
the engine computes statistics (so they cannot be forged here).

In the candidate's process the timed calls follow the correctness trials when
anvil says so, and run under anvil's call clock (src/run/call_clock.h,
docs/protocol.md): once its inputs are copied and the
L2 flushed, each call says "ready" and waits for anvil's "go"; its end — after
the whole device is synchronized — goes back with the nonce and the time, so
anvil measures every call's wall time itself.
"""

import ctypes
import os
import struct
import time

import torch

_MESSAGE = struct.Struct("<8sQd")


def _read_message(fd):
    """One message from anvil, or None when it closed the channel first."""
    data = b""
    while len(data) < _MESSAGE.size:
        chunk = os.read(fd, _MESSAGE.size - len(data))
        if not chunk:
            if data:
                raise RuntimeError("anvil's timing channel closed mid-message")
            return None
        data += chunk
    return _MESSAGE.unpack(data)


class CallClock:
    """The child's side: fds from --clock-fds GO,DONE."""

    def __init__(self, fds):
        self.go_fd, self.done_fd = (int(x) for x in fds.split(","))

    def trials_done(self):
        """The trials' outputs are written. None when anvil is done; otherwise it wants the timed calls now, and
        this is the mask of those to run under the kernel trace (bit k: call k)."""
        os.write(self.done_fd, _MESSAGE.pack(b"trials", 0, 0.0))
        message = _read_message(self.go_fd)
        if message is None:
            return None
        if message[0].rstrip(b"\0") != b"perf":
            raise RuntimeError(f"unexpected timing message {message[0]!r}")
        return message[1]

    def ready(self):
        os.write(self.done_fd, _MESSAGE.pack(b"ready", 0, 0.0))

    def wait_go(self):
        message = _read_message(self.go_fd)
        if message is None:
            raise RuntimeError("anvil's timing channel closed")
        tag, nonce, _ = message
        if tag.rstrip(b"\0") != b"go":
            raise RuntimeError(f"unexpected timing message {tag!r}")
        return nonce

    def done(self, nonce, ms):
        os.write(self.done_fd, _MESSAGE.pack(b"done", nonce, float(ms)))

    def recheck(self):
        """After the last call: (seed, count) of the input sets whose last output anvil looks at again
        (recheck_sample), or None when it sent none."""
        message = _read_message(self.go_fd)
        if message is None:
            return None
        tag, seed, count = message
        if tag.rstrip(b"\0") != b"recheck":
            raise RuntimeError(f"unexpected timing message {tag!r}")
        return seed, int(count)


def recheck_sample(sets, k, seed):
    """The `k` of `sets` input sets (sorted) that `seed` picks: a partial Fisher-Yates shuffle driven by
    splitmix64, the same as the engine's RecheckSample (src/run/call_clock.h)."""
    mask = (1 << 64) - 1
    index = list(range(sets))
    k = max(0, min(k, sets))
    for i in range(k):
        seed = (seed + 0x9E3779B97F4A7C15) & mask
        z = seed
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        z ^= z >> 31
        j = i + z % (sets - i)
        index[i], index[j] = index[j], index[i]
    return sorted(index[:k])


_CUDA_LIMIT_PERSISTING_L2_CACHE_SIZE = 0x06


def _loaded_cudart():
    """The CUDA runtime library this process already uses (torch's), or None."""
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split()[-1]
                if "/libcudart.so" in path:
                    return ctypes.CDLL(path)
    except OSError:
        pass
    return None


class Timer:
    def __init__(self, device):
        self.device = torch.device(device)
        self.flush = None
        self.cudart = None
        if self.device.type == "cuda":
            l2 = torch.cuda.get_device_properties(self.device).L2_cache_size
            self.flush = torch.empty(max(2 * l2, 1 << 20) // 4, dtype=torch.int32, device=self.device)
            self.cudart = _loaded_cudart()

    def _reset_persisting_l2(self):
        """Catalog D7: lines a kernel marked persisting would survive the flush; demote them and take the
        set-aside away before every timed call."""
        if self.cudart is None:
            return
        try:
            failed = (self.cudart.cudaDeviceSetLimit(_CUDA_LIMIT_PERSISTING_L2_CACHE_SIZE, ctypes.c_size_t(0)) != 0
                      or self.cudart.cudaCtxResetPersistingL2Cache() != 0)
            if failed:  # Unsupported here (e.g. MIG): clear the error so torch's next launch check does not see it.
                self.cudart.cudaGetLastError()
                self.cudart = None
        except (AttributeError, OSError):
            self.cudart = None

    def sync(self):
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def time(self, fn, warmup, iters, before_each=None, clock=None, trace=None, traced=0):
        """`trace` (kernel_trace.KernelTrace) records each warmup call (warm_K) and the timed calls of the `traced`
        mask (call_K), marked from just before the start event to after the device synchronized; it is off for the
        other timed calls, whose times are the ones anvil keeps."""
        for k in range(warmup):
            if before_each:
                before_each()
            begin = trace.now() if trace else 0
            fn()
            self.sync()
            if trace:
                trace.mark(f"warm_{k}", begin, trace.now())
        times = []
        cuda = self.device.type == "cuda"
        for k in range(iters):
            traced_call = bool(trace) and k < 64 and bool(traced >> k & 1)
            if trace:
                trace.enable(traced_call)
            if before_each:
                before_each()
            if cuda:
                self._reset_persisting_l2()
                self.flush.zero_()
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                self.sync()  # The flush and the input copy are done before the clock starts.
            nonce = 0
            if clock:
                clock.ready()
                nonce = clock.wait_go()
            if cuda:
                begin = trace.now() if trace else 0
                start.record()
                fn()
                end.record()
                self.sync()  # The whole device: work on any stream ends inside anvil's wall time.
                if traced_call:
                    trace.mark(f"call_{k}", begin, trace.now())
                ms = start.elapsed_time(end)
            else:
                t0 = time.perf_counter_ns()
                fn()
                ms = (time.perf_counter_ns() - t0) / 1e6
            if clock:
                clock.done(nonce, ms)
            times.append(ms)
        return times
