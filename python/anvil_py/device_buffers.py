"""Device memory of its own, passed as a descriptor: CUDA's virtual memory management, through the driver API.

A buffer is one physical allocation (cuMemCreate) holding one tensor and nothing else, its padding up to the
allocation granularity zeroed: never memory of torch's caching allocator, which packs neighbours (a reference output
among them) into one allocation, and never a legacy IPC handle. The trusted side (anvil_py/task_server.py) makes it
and exports it as a POSIX file descriptor, sent on the socket pair of the trial channel (anvil_py/trial_channel.py);
the candidate's worker imports and maps it. The driver counts references: the memory stays while either side still
maps it or holds a handle to it, so each side lets go of its own when it is done.
"""

import ctypes
import math
import threading

import torch

_ALLOCATION_PINNED = 1
_HANDLE_POSIX_FD = 1
_LOCATION_DEVICE = 1
_ACCESS_READ_WRITE = 3
_GRANULARITY_MINIMUM = 0


class DeviceBufferError(Exception):
    """A driver call failed: names the call and the driver's error."""


class _Location(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]


class _AllocFlags(ctypes.Structure):
    _fields_ = [("compressionType", ctypes.c_ubyte), ("gpuDirectRDMACapable", ctypes.c_ubyte),
                ("usage", ctypes.c_ushort), ("reserved", ctypes.c_ubyte * 4)]


class _AllocationProp(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("requestedHandleTypes", ctypes.c_int), ("location", _Location),
                ("win32HandleMetaData", ctypes.c_void_p), ("allocFlags", _AllocFlags)]


class _AccessDesc(ctypes.Structure):
    _fields_ = [("location", _Location), ("flags", ctypes.c_int)]


class _Driver:
    """libcuda's calls this file makes, and the device's primary context (torch's) made current where needed."""

    def __init__(self):
        self.lib = ctypes.CDLL("libcuda.so.1")
        u64, size = ctypes.c_ulonglong, ctypes.c_size_t
        signatures = {
            "cuMemGetAllocationGranularity": [ctypes.POINTER(size), ctypes.POINTER(_AllocationProp), ctypes.c_int],
            "cuMemCreate": [ctypes.POINTER(u64), size, ctypes.POINTER(_AllocationProp), u64],
            "cuMemRelease": [u64],
            "cuMemAddressReserve": [ctypes.POINTER(u64), size, size, u64, u64],
            "cuMemAddressFree": [u64, size],
            "cuMemMap": [u64, size, size, u64, u64],
            "cuMemUnmap": [u64, size],
            "cuMemSetAccess": [u64, size, ctypes.POINTER(_AccessDesc), size],
            "cuMemExportToShareableHandle": [ctypes.c_void_p, u64, ctypes.c_int, u64],
            "cuMemImportFromShareableHandle": [ctypes.POINTER(u64), ctypes.c_void_p, ctypes.c_int],
            "cuCtxGetCurrent": [ctypes.POINTER(ctypes.c_void_p)],
            "cuCtxSetCurrent": [ctypes.c_void_p],
            "cuDevicePrimaryCtxRetain": [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int],
            "cuGetErrorString": [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)],
            "cuInit": [ctypes.c_uint],
        }
        for name, args in signatures.items():
            f = getattr(self.lib, name)
            f.argtypes, f.restype = args, ctypes.c_int
        self.contexts = {}
        self.granularity = {}
        self.lock = threading.Lock()
        self.check("cuInit", 0)

    def check(self, name, *args):
        rc = getattr(self.lib, name)(*args)
        if rc != 0:
            text = ctypes.c_char_p()
            self.lib.cuGetErrorString(rc, ctypes.byref(text))
            raise DeviceBufferError(f"{name} failed: {(text.value or b'unknown error').decode()} ({rc})")

    def current(self, device):
        """Makes `device`'s primary context current on this thread (torch's; created if torch has not yet)."""
        ctx = ctypes.c_void_p()
        self.check("cuCtxGetCurrent", ctypes.byref(ctx))
        if ctx.value is not None:
            return
        with self.lock:
            if device not in self.contexts:
                torch.zeros(1, device=torch.device("cuda", device))  # torch's context first: it is the primary one.
                primary = ctypes.c_void_p()
                self.check("cuDevicePrimaryCtxRetain", ctypes.byref(primary), device)
                self.contexts[device] = primary
        self.check("cuCtxSetCurrent", self.contexts[device])

    def prop(self, device):
        p = _AllocationProp()
        p.type, p.requestedHandleTypes = _ALLOCATION_PINNED, _HANDLE_POSIX_FD
        p.location.type, p.location.id = _LOCATION_DEVICE, device
        return p

    def padded(self, device, nbytes):
        """`nbytes` rounded up to the device's allocation granularity (at least one granule)."""
        if device not in self.granularity:
            g = ctypes.c_size_t()
            self.check("cuMemGetAllocationGranularity", ctypes.byref(g), ctypes.byref(self.prop(device)),
                       _GRANULARITY_MINIMUM)
            self.granularity[device] = g.value
        g = self.granularity[device]
        return max(g, (nbytes + g - 1) // g * g)


_driver = None
_driver_lock = threading.Lock()
# Bytes of the allocations this process made (new_buffer) and still maps: what it exported holds at least this much
# of the device (an importer's mapping keeps an allocation alive after this side lets go).
_exported = 0
_exported_lock = threading.Lock()


def exported_bytes():
    """Bytes of the buffers this process made and still maps (new_buffer's, not imported ones)."""
    return _exported


def _count_exported(size):
    global _exported
    with _exported_lock:
        _exported += size


def _get_driver():
    global _driver
    with _driver_lock:
        if _driver is None:
            _driver = _Driver()
        return _driver


class _Mapping:
    """One allocation mapped here: the handle, the address range, and their release when it is dropped (by the
    last tensor that views it). Presents the range to torch as a CUDA array of bytes."""

    def __init__(self, driver, device, handle, size, made=False):
        """Maps `handle` (released here if that fails); `made`: this process created the allocation (counted in
        exported_bytes() until released)."""
        self.driver, self.device, self.handle, self.size = driver, device, handle, size
        self.ptr = 0
        self.mapped = False
        self.made = made
        if made:
            _count_exported(size)
        try:
            ptr = ctypes.c_ulonglong()
            driver.check("cuMemAddressReserve", ctypes.byref(ptr), size, 0, 0, 0)
            self.ptr = ptr.value
            driver.check("cuMemMap", self.ptr, size, 0, handle, 0)
            self.mapped = True
            access = _AccessDesc()
            access.location.type, access.location.id = _LOCATION_DEVICE, device
            access.flags = _ACCESS_READ_WRITE
            driver.check("cuMemSetAccess", self.ptr, size, ctypes.byref(access), 1)
        except BaseException:
            self.release()
            raise

    @property
    def __cuda_array_interface__(self):
        return {"shape": (self.size,), "typestr": "|u1", "data": (self.ptr, False), "version": 2}

    def release(self):
        if self.made:
            self.made = False
            _count_exported(-self.size)
        d = self.driver
        try:
            d.current(self.device)
            if self.mapped:
                d.lib.cuMemUnmap(self.ptr, self.size)
                self.mapped = False
            if self.ptr:
                d.lib.cuMemAddressFree(self.ptr, self.size)
                self.ptr = 0
            if self.handle is not None:
                d.lib.cuMemRelease(self.handle)
                self.handle = None
        except Exception:  # noqa: BLE001 - a process ending: the driver lets go of everything anyway.
            pass

    def __del__(self):
        self.release()


def _tensor(mapping, dtype, shape):
    whole = torch.as_tensor(mapping, device=torch.device("cuda", mapping.device))
    n = dtype.itemsize * math.prod(shape)
    return whole[:n].view(dtype).reshape(shape), whole


def _prepared(device, dtype, shape):
    """The driver, with cuda `device`'s context current on this thread, and the size an allocation for a tensor of
    `dtype` and `shape` has there (both sides compute it alike)."""
    d = _get_driver()
    d.current(device)
    return d, d.padded(device, dtype.itemsize * math.prod(shape))


_zeroing = {}
_zeroing_lock = threading.Lock()


def _zeroing_stream(device):
    """A stream of cuda `device` that zeroes new buffers and does nothing else (fresh memory waits for no work)."""
    with _zeroing_lock:
        if device not in _zeroing:
            _zeroing[device] = torch.cuda.Stream(device=device)
        return _zeroing[device]


def new_buffer(device, dtype, shape):
    """(fd, tensor): a zeroed allocation of its own for a tensor of `dtype` and `shape` on cuda `device` (an index),
    exported as a POSIX descriptor (the caller closes it), and this side's mapping of it as a tensor; the allocation
    goes when the tensor does and every importer has let go."""
    d, size = _prepared(device, dtype, shape)
    handle = ctypes.c_ulonglong()
    d.check("cuMemCreate", ctypes.byref(handle), size, ctypes.byref(d.prop(device)), 0)
    mapping = _Mapping(d, device, handle.value, size, made=True)
    fd = ctypes.c_int(-1)
    try:
        d.check("cuMemExportToShareableHandle", ctypes.byref(fd), handle.value, _HANDLE_POSIX_FD, 0)
    except BaseException:
        mapping.release()
        raise
    tensor, whole = _tensor(mapping, dtype, shape)
    # The padding too: nothing of an earlier user of the memory is left in it. Zeroed on a stream of its own and
    # finished before the descriptor leaves: queued behind this side's work, the zeroing would land after an
    # importer's first write and wipe it (the all-zero rechecks of bench/results/recheck_zeroing_and_hog_h100.md).
    stream = _zeroing_stream(device)
    with torch.cuda.stream(stream):
        whole.zero_()
    stream.synchronize()
    return fd.value, tensor


def import_buffer(fd, device, dtype, shape):
    """The allocation that `fd` (new_buffer's descriptor, received; left open) stands for, mapped on cuda `device`
    as a tensor of `dtype` and `shape`. DeviceBufferError when the driver refuses it, e.g. an allocation smaller
    than the tensor."""
    d, size = _prepared(device, dtype, shape)
    handle = ctypes.c_ulonglong()
    d.check("cuMemImportFromShareableHandle", ctypes.byref(handle), ctypes.c_void_p(fd), _HANDLE_POSIX_FD)
    mapping = _Mapping(d, device, handle.value, size)
    return _tensor(mapping, dtype, shape)[0]
