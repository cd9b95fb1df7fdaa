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

Each timed call runs in compiled code (libanvil_timer.so, src/run/call_timer.cc; its path in $ANVIL_TIMER_LIB,
loaded before the candidate's code): from "go" to "done" — the events, the forward, the synchronize, the time and
the message — nothing runs that Python code could have replaced (catalog D3). Without the library (a worker
started by hand) the same steps run here, with torch's events.
"""

import ctypes
import os
import struct
import time

import numpy
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

    def announce_trials(self):
        """The trials' outputs are written: anvil compares them meanwhile."""
        os.write(self.done_fd, _MESSAGE.pack(b"trials", 0, 0.0))

    def await_perf(self):
        """After announce_trials: None when anvil is done; otherwise the mask of the timed calls to run under the
        kernel trace (bit k: call k)."""
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


RECHECK_POINTS = 1 << 18


def recheck_points(n, seed, k, i):
    """The flat indices of output `i` (`n` elements) of timing set `k` that anvil compares again: None when
    n <= RECHECK_POINTS (all of them), else RECHECK_POINTS drawn by splitmix64 — the engine's RecheckPoints
    (src/run/call_clock.h)."""
    if n <= RECHECK_POINTS:
        return None
    mask = (1 << 64) - 1
    base = numpy.uint64((seed ^ (k << 32) ^ (i << 48)) & mask)
    with numpy.errstate(over="ignore"):
        z = base + numpy.arange(1, RECHECK_POINTS + 1, dtype=numpy.uint64) * numpy.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> numpy.uint64(30))) * numpy.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> numpy.uint64(27))) * numpy.uint64(0x94D049BB133111EB)
        z ^= z >> numpy.uint64(31)
    return (z % numpy.uint64(n)).astype(numpy.int64)


_CUDA_LIMIT_PERSISTING_L2_CACHE_SIZE = 0x06
_FORWARD = ctypes.CFUNCTYPE(ctypes.c_int)


class CompiledTimer:
    """libanvil_timer.so: one timed call from anvil's go to its done, in compiled code."""

    def __init__(self, path, cuda, flush=None, now=None):
        """`flush` (a device tensor; None: none) is zeroed after each go, before the start event, and `now` (the
        address of the kernel trace's clock function; None: none) read when that is done (flush_end)."""
        lib = ctypes.CDLL(path)
        lib.anvil_timer_error.restype = ctypes.c_char_p
        lib.anvil_timer_open_cuda.restype = ctypes.c_int
        lib.anvil_timer_open_cuda.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
        lib.anvil_timer_flush_end.restype = ctypes.c_uint64
        lib.anvil_timer_reset_l2.restype = ctypes.c_int
        lib.anvil_timer_call.restype = ctypes.c_double
        lib.anvil_timer_call.argtypes = [_FORWARD, ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
        lib.anvil_timer_release.restype = None
        lib.anvil_timer_watch.restype = None
        lib.anvil_timer_watch.argtypes = [ctypes.c_int]
        flush_args = (flush.data_ptr(), flush.numel() * flush.element_size()) if flush is not None else (None, 0)
        if cuda and lib.anvil_timer_open_cuda(*flush_args, now) != 0:
            raise RuntimeError(f"the compiled timer cannot use CUDA: {self._error(lib)}")
        self.lib = lib

    @staticmethod
    def _error(lib):
        return lib.anvil_timer_error().decode(errors="replace")

    def reset_l2(self):
        self.lib.anvil_timer_reset_l2()

    def flush_end(self):
        """The kernel trace's clock when the last call's flush after go ended (0: none)."""
        return self.lib.anvil_timer_flush_end()

    def watch(self, report_fd):
        """Seals the timer's state and has a write to it named on anvil's report channel (`report_fd`, or -1)."""
        self.lib.anvil_timer_watch(report_fd)

    def call(self, fn, stream, clock, after=None):
        """`fn` timed (ms), under anvil's clock when `clock` is given. `after` runs once the call has returned and
        before the thread's signals (held since that return) are let through again."""
        raised = []

        def forward():
            try:
                fn()
                return 0
            except BaseException as err:  # noqa: BLE001 - raised again below, outside the callback
                raised.append(err)
                return 1

        callback = _FORWARD(forward)
        go, done = (clock.go_fd, clock.done_fd) if clock else (-1, -1)
        try:
            ms = self.lib.anvil_timer_call(callback, stream, go, done)
            if after is not None and not raised and ms >= 0:
                after()
        finally:
            self.lib.anvil_timer_release()
        if raised:
            raise raised[0]
        if ms < 0:
            raise RuntimeError(f"timed call failed: {self._error(self.lib)}")
        return ms


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
    def __init__(self, device, compiled=None, flush_after_go=False, trace=None):
        """`compiled`: libanvil_timer.so's path (default $ANVIL_TIMER_LIB); create the Timer before the
        candidate's code is loaded. `flush_after_go` (CUDA; the task server writes each call's inputs after
        `ready`): the L2 is flushed after anvil's go, not before ready, and the call's trace window (`trace`,
        kernel_trace.KernelTrace) begins once that flush is done."""
        self.device = torch.device(device)
        self.flush = None
        self.cudart = None
        self.stream = None
        cuda = self.device.type == "cuda"
        self.flush_after_go = cuda and flush_after_go
        if cuda:
            l2 = torch.cuda.get_device_properties(self.device).L2_cache_size
            self.flush = torch.empty(max(2 * l2, 1 << 20) // 4, dtype=torch.int32, device=self.device)
            self.stream = torch.cuda.current_stream(self.device).cuda_stream
        path = compiled if compiled is not None else os.environ.get("ANVIL_TIMER_LIB")
        now = None
        if self.flush_after_go and trace is not None and trace.lib is not None:
            now = ctypes.cast(trace.lib.anvil_trace_now, ctypes.c_void_p).value
        self.compiled = (CompiledTimer(path, cuda, self.flush if self.flush_after_go else None, now)
                         if path else None)
        if cuda and self.compiled is None:
            self.cudart = _loaded_cudart()

    def watch(self, report_fd):
        """From now on (before the candidate's code loads) a write to the compiled timer's state is a tamper
        finding on anvil's report channel."""
        if self.compiled is not None:
            self.compiled.watch(-1 if report_fd is None else report_fd)

    def _reset_persisting_l2(self):
        """Catalog D7: lines a kernel marked persisting would survive the flush; demote them and take the
        set-aside away before every timed call."""
        if self.compiled is not None:
            self.compiled.reset_l2()
            return
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

    def time(self, fn, warmup, iters, before_each=None, clock=None, trace=None, traced=0, after_each=None):
        """`trace` (kernel_trace.KernelTrace) records each warmup call (warm_K) and the timed calls of the `traced`
        mask (call_K), marked from just before the start event to after the device synchronized; it is off for the
        other timed calls, whose times are the ones anvil keeps. `after_each` runs right after each timed call
        returns (in compiled timing, while the thread's signals are held)."""
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
                if not self.flush_after_go:
                    self.flush.zero_()
                self.sync()  # The flush and the input copy are done before the clock starts.
            if self.compiled is not None:
                begin = trace.now() if trace else 0
                ms = self.compiled.call(fn, self.stream, clock, after_each)
                if traced_call:
                    # A flush after go is the harness's: the window begins after it.
                    trace.mark(f"call_{k}", max(begin, self.compiled.flush_end()), trace.now())
                times.append(ms)
                continue
            if cuda:
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
            nonce = 0
            if clock:
                clock.ready()
                nonce = clock.wait_go()
            if cuda:
                if self.flush_after_go:
                    self.flush.zero_()
                    self.sync()
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
            if after_each is not None:
                after_each()
            times.append(ms)
        return times
