"""The candidate's side of the kernel trace: loads anvil's recorder (libanvil_trace.so, src/integrity/kernel_tracer.cc)
with torch's own CUPTI, marks the windows anvil judges — each trial's forward, each warmup and timed call — and has
the recorder write everything to a file in the candidate's output folder. Nothing here judges: anvil reads the file
(src/integrity/kernel_trace.h). When the trace cannot start, the file says why in one `E` line.
"""

import ctypes
import glob
import os

import torch


def _find_cupti():
    """torch's libcupti (the one matching its CUDA), else any the loader finds."""
    if os.environ.get("ANVIL_CUPTI"):
        return os.environ["ANVIL_CUPTI"]
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split()[-1]
                if "/libcupti.so" in path:
                    return path
    except OSError:
        pass
    site = os.path.dirname(os.path.dirname(torch.__file__))
    for pattern in ("nvidia/cu*/lib/libcupti.so*", "nvidia/cuda_cupti/lib/libcupti.so*"):
        found = sorted(glob.glob(os.path.join(site, pattern)))
        if found:
            return found[0]
    return "libcupti.so"


class KernelTrace:
    def __init__(self, lib_path):
        self.error = None
        self.lib = None
        self.on = True
        try:
            lib = ctypes.CDLL(lib_path)
        except OSError as err:
            self.error = f"cannot load {lib_path}: {err}"
            return
        lib.anvil_trace_start.argtypes = [ctypes.c_char_p]
        lib.anvil_trace_error.restype = ctypes.c_char_p
        lib.anvil_trace_now.restype = ctypes.c_uint64
        lib.anvil_trace_mark.argtypes = [ctypes.c_char_p, ctypes.c_uint64, ctypes.c_uint64]
        lib.anvil_trace_write.argtypes = [ctypes.c_char_p]
        lib.anvil_trace_enable.argtypes = [ctypes.c_int]
        if lib.anvil_trace_start(_find_cupti().encode()) != 0:
            self.error = lib.anvil_trace_error().decode(errors="replace")
            return
        self.lib = lib

    def now(self):
        return self.lib.anvil_trace_now() if self.lib else 0

    def enable(self, on):
        """Records (True) or not (False) from now on; a change waits for the device to be idle."""
        if self.lib and on != self.on:
            self.lib.anvil_trace_enable(1 if on else 0)
            self.on = on

    def mark(self, label, begin, end):
        if self.lib:
            self.lib.anvil_trace_mark(label.encode(), begin, end)

    def write(self, path):
        if self.lib and self.lib.anvil_trace_write(path.encode()) == 0:
            return
        error = self.error or self.lib.anvil_trace_error().decode(errors="replace")
        with open(path, "w") as f:
            f.write("E\t" + error.replace("\n", " ") + "\n")
