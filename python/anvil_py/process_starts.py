"""Library code's process starts fail as the operating system's refusal (EPERM) instead of ending the worker.

The sandbox (docs/sandbox.md, seccomp) kills a candidate process at its first fork or clone of a process: a
`sandbox.forbidden_syscall` cheat. Some legitimate code starts a process by itself and copes when it cannot:
`platform.processor()` and `platform.architecture()` run `uname -p` and `file`, `ctypes.util.find_library` runs
`ldconfig -p`, torch's `verify_ninja_availability` runs `ninja --version`. Python's own ways of starting a program
(`subprocess`, `os.posix_spawn`) raise PermissionError here instead, so such code gets its fallback; candidate code
that starts a process itself is named by the static rules (`py.process`), and a start that gets past Python (`os.fork`,
`os.system`, native code, a restored function) still meets the kill. Installed by the worker before any candidate
code runs.
"""

import errno
import os
import subprocess


def _refuse(*_, **__):
    raise PermissionError(errno.EPERM, "the sandbox starts no process (anvil: docs/sandbox.md)")


def refuse_process_starts():
    subprocess._fork_exec = _refuse
    for name in ("posix_spawn", "posix_spawnp"):
        if hasattr(os, name):
            setattr(os, name, _refuse)
