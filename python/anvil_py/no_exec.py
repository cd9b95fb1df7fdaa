"""Forbids execve in an exec'd worker before it runs candidate code (docs/sandbox.md, seccomp).

anvil's sandbox (src/core/sandbox.cc) is entered between fork and exec, so its filter must let the worker's own exec
through; a zygote's child runs in-process and gets execve forbidden there. An exec'd worker stacks this second filter
on itself: from then on execve and execveat kill the process (SIGSYS), as the sandbox's other forbidden calls do, so a
candidate cannot replace the worker with a program that inherits its descriptors (the timing pipes, the report).

Only inside the sandbox (no_new_privs set and a seccomp filter in force): there the filter always installs, and a
failure ends the worker rather than running the candidate with exec allowed. Elsewhere nothing is done.
"""

import ctypes
import platform

_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K
_KILL = 0x80000000  # SECCOMP_RET_KILL_PROCESS
_ALLOW = 0x7FFF0000
_X32_BIT = 0x40000000

# machine -> (AUDIT_ARCH_*, execve, execveat)
_ARCHES = {
    "x86_64": (0xC000003E, 59, 322),
    "aarch64": (0xC00000B7, 221, 281),
}


class _Insn(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_Insn))]


def _status():
    fields = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    return fields


def _program(arch, execve, execveat):
    return [
        _Insn(_LD_W_ABS, 0, 0, 4),  # seccomp_data.arch
        _Insn(_JEQ_K, 1, 0, arch),
        _Insn(_RET_K, 0, 0, _KILL),
        _Insn(_LD_W_ABS, 0, 0, 0),  # seccomp_data.nr
        _Insn(_JGE_K, 3, 0, _X32_BIT),  # x86_64's x32 calls carry this bit (none exist on aarch64): kill.
        _Insn(_JEQ_K, 2, 0, execve),
        _Insn(_JEQ_K, 1, 0, execveat),
        _Insn(_RET_K, 0, 0, _ALLOW),
        _Insn(_RET_K, 0, 0, _KILL),
    ]


def forbid_exec():
    """Installs the filter inside the sandbox; raises SystemExit there when it cannot. Returns whether it did."""
    status = _status()
    if status.get("NoNewPrivs") != "1" or status.get("Seccomp") != "2":
        return False
    machine = platform.machine()
    if machine not in _ARCHES:
        raise SystemExit(f"anvil: cannot forbid execve on {machine}: no seccomp program for it")
    insns = _program(*_ARCHES[machine])
    array = (_Insn * len(insns))(*insns)
    prog = _Prog(len(insns), ctypes.cast(array, ctypes.POINTER(_Insn)))
    libc = ctypes.CDLL(None, use_errno=True)
    ulong = ctypes.c_ulong  # prctl reads unsigned longs: no stray upper halves.
    if libc.prctl(_PR_SET_SECCOMP, ulong(_SECCOMP_MODE_FILTER), ctypes.byref(prog), ulong(0), ulong(0)) != 0:
        raise SystemExit(f"anvil: cannot forbid execve: seccomp filter refused (errno {ctypes.get_errno()})")
    return True
