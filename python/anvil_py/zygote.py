"""The warm process that forks anvil's Python workers (src/core/zygote.h).

Started once by the engine with a SOCK_SEQPACKET socket as fd 3 and the path of libanvil_sandbox.so. It imports
torch and the workers (no CUDA: each child makes its own context), says "ready", then serves requests: JSON
{"id", "module", "args", "env", "cwd", "sandbox", "ruleset", "passed", "cgroups", "parent", "parent_group"} with
descriptors (stdout, stderr, report, then the Landlock ruleset, the passed ones and the job's control groups'
cgroup.procs, at the indexes the request names). For each it forks a child that joins those control groups, takes
the descriptors as 1, 2, 3, 4, ..., its environment and working folder, its own process group, enters the sandbox
(the same code as an exec'd worker: anvil_sandbox_enter), writes the layers to the report descriptor, and runs the
module as __main__. It answers {"id", "pid"} at once and {"exit": pid, "status": wait status} when the child has
ended. It holds no task data: reference outputs and seeds only ever exist in children.
"""

import ctypes
import fcntl
import json
import resource
import os
import runpy
import select
import signal
import socket
import struct
import sys
import tempfile
import traceback

PR_SET_PDEATHSIG = 1


CGROUP_LAYER = 1 << 9  # kSandboxCgroup (src/core/sandbox.h)


def _join_cgroups(request, fds):
    """First thing in the child: into the job's control groups (its quotas, src/core/cgroup.h). One it cannot join
    ends the child before anything runs: its report says no cgroup layer, and anvil calls that its own failure."""
    for i in request.get("cgroups", []):
        try:
            os.write(fds[i], b"0")
        except OSError as e:
            os.write(fds[2], struct.pack("<I", 0))
            os.write(fds[1], f"cannot join the job's control group: {e}\n".encode())
            os._exit(127)
    for i in request.get("cgroups", []):
        os.close(fds[i])
    return CGROUP_LAYER if request.get("cgroups") else 0


def _enter(request, fds, sandbox_lib):
    """In the child: descriptors, environment, folder, sandbox. Returns nothing; raises on failure."""
    joined = _join_cgroups(request, fds)
    os.setpgid(0, 0)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    out, err, report = fds[0], fds[1], fds[2]
    ruleset = fds[request["ruleset"]] if request["ruleset"] >= 0 else -1
    passed = [fds[i] for i in request["passed"]]
    # Above the numbers the passed descriptors take (3, 4, ...), and within RLIMIT_NOFILE however low it is.
    high = 3 + len(passed)
    report = fcntl.fcntl(report, fcntl.F_DUPFD, high)
    if ruleset >= 0:
        ruleset = fcntl.fcntl(ruleset, fcntl.F_DUPFD, high)
    passed = [fcntl.fcntl(fd, fcntl.F_DUPFD, high) for fd in passed]
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(out, 1)
    os.dup2(err, 2)
    for i, fd in enumerate(passed):
        os.dup2(fd, 3 + i)
    # Nothing else crosses into the worker: not the zygote's socket, not other requests' descriptors.
    low = 3 + len(passed)
    for fd in sorted(x for x in (report, ruleset) if x >= 0):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 65536)
    if request["cwd"]:
        os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update({k: v for k, v in request["env"]})
    # What the zygote's imports read from its own environment once: the temporary folder (the child's TMPDIR is its
    # scratch; the zygote's /tmp is read-only in the sandbox).
    tempfile.tempdir = None
    layers = 0
    if request["sandbox"] is not None:
        # The zygote (this child's parent) is as off-limits to signals as anvil.
        layers = sandbox_lib.anvil_sandbox_enter(request["sandbox"].encode(), ruleset, request["parent"],
                                                 request["parent_group"], os.getppid())
    os.write(report, struct.pack("<I", layers | joined))
    os.close(report)
    if ruleset >= 0:
        os.close(ruleset)


def _child(request, fds, sandbox_lib):
    code = 0
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        try:
            _enter(request, fds, sandbox_lib)
        except BaseException:  # noqa: BLE001 - before the worker runs: anvil reads why from its stderr pipe
            why = f"the zygote's child could not start {request['module']}: {traceback.format_exc()}".encode()
            for fd in (fds[1], 2):
                try:
                    os.write(fd, why)
                    break
                except OSError:
                    continue
            os._exit(127)
        sys.argv = [request["module"]] + list(request["args"])
        sys.modules.pop(request["module"], None)  # Run afresh as __main__, like `python -m`.
        runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
    except SystemExit as e:
        if e.code is None:
            code = 0
        elif isinstance(e.code, int):
            code = e.code
        else:
            print(e.code, file=sys.stderr)
            code = 1
    except BaseException:  # noqa: BLE001 - reported like an uncaught exception in `python -m`
        traceback.print_exc()
        code = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def _fork_keeps_cuda():
    """Whether a child forked now may still initialize CUDA (torch marks it a 'bad fork' otherwise)."""
    import torch
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.write(w, b"1" if torch.cuda._is_in_bad_fork() else b"0")
        finally:
            os._exit(0)
    os.close(w)
    answer = os.read(r, 1)
    os.close(r)
    os.waitpid(pid, 0)
    return answer == b"0"


def main():
    sandbox_lib = ctypes.CDLL(sys.argv[1])
    sandbox_lib.anvil_sandbox_enter.restype = ctypes.c_uint32
    sandbox_lib.anvil_sandbox_enter.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                                ctypes.c_int]
    import torch  # The point of this process: every child starts with it imported...
    import anvil_py.candidate_worker
    import anvil_py.forward_trace
    import anvil_py.task_worker  # noqa: F401

    # ...and torch.utils.cpp_extension, which every candidate worker patches (load_inline): it imports setuptools,
    # 0.45 s a child on the CPU machine, in the extraction and again in the run. Its import asks
    # torch.cuda.is_available() (only to warn when there is no CUDA runtime), and that call initializes the CUDA
    # driver: every child forked after it fails at its first CUDA call ("Cannot re-initialize CUDA in forked
    # subprocess"). So it is answered without the driver for the import; the warning concerns compiling, which no
    # worker does.
    is_available = torch.cuda.is_available
    torch.cuda.is_available = lambda: True
    try:
        import torch.utils.cpp_extension  # noqa: F401
    except ImportError:
        pass  # Each worker then imports it itself, and reports what is missing.
    finally:
        torch.cuda.is_available = is_available

    # ...and with what torch loads lazily on first use (the first op under a dispatch mode took 1 s): CPU only,
    # under the same traces a candidate's forwards run under.
    with anvil_py.forward_trace.ForwardTrace().forward("zygote warm-up"):
        torch.ones(4).relu().sum()
    anvil_py.candidate_worker.warm_meta()

    sock = socket.socket(fileno=3)
    # Whatever the imports above did (another torch may touch CUDA elsewhere), a child that could not use CUDA
    # must not be forked from here: anvil then starts each worker on its own.
    if not _fork_keeps_cuda():
        sock.send(b'{"ready": false, "error": "CUDA was initialized in the zygote: its children could not use it"}')
        os._exit(1)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    sock.send(b'{"ready": true}')

    def reap():
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            sock.send(json.dumps({"exit": pid, "status": status}).encode())

    while True:
        ready, _, _ = select.select([sock, wake_r], [], [])
        if wake_r in ready:
            os.read(wake_r, 4096)
        reap()
        if sock not in ready:
            continue
        try:
            message, fds, flags, _ = socket.recv_fds(sock, 1 << 20, 16)
        except OSError:
            return
        if not message:
            return  # anvil is gone.
        request = json.loads(message)
        if flags & socket.MSG_CTRUNC:
            # The kernel dropped descriptors this process had no room for: the child would start without its
            # output, report or control-group descriptors. The machine's failure, said as such.
            for fd in fds:
                os.close(fd)
            limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
            sock.send(json.dumps({"id": request["id"], "error": (
                "the zygote could not take the request's descriptors: it is out of file descriptors (its "
                f"RLIMIT_NOFILE is {limit}; raise anvil's, e.g. ulimit -n 4096)")}).encode())
            continue
        try:
            pid = os.fork()
        except OSError as e:
            for fd in fds:
                os.close(fd)
            sock.send(json.dumps({"id": request["id"], "error": str(e)}).encode())
            continue
        if pid == 0:
            sock.close()
            _child(request, fds, sandbox_lib)
        for fd in fds:
            os.close(fd)
        sock.send(json.dumps({"id": request["id"], "pid": pid}).encode())


if __name__ == "__main__":
    main()
