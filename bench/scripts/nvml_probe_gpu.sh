#!/bin/bash
# What NVML's per-process accounting says on this machine (issue 38, the device-memory quota): whether the pids of
# nvmlDeviceGetComputeRunningProcesses are the ones anvil sees (a container may show the host's), and how soon a
# process's allocation shows there. Prints one line per check.
#   run(command="bash bench/scripts/nvml_probe_gpu.sh")
set -u
cd "$(dirname "$0")/../.."
python3 - <<'PY'
import ctypes, os, subprocess, sys, time

nvml = ctypes.CDLL("libnvidia-ml.so.1")
print("nvmlInit_v2", nvml.nvmlInit_v2())
version = ctypes.create_string_buffer(96)
nvml.nvmlSystemGetDriverVersion(version, 96)
print("driver", version.value.decode())
dev = ctypes.c_void_p()
print("handle", nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(dev)))


class Info(ctypes.Structure):
    _fields_ = [("pid", ctypes.c_uint), ("used", ctypes.c_ulonglong), ("gi", ctypes.c_uint), ("ci", ctypes.c_uint)]


def processes():
    n = ctypes.c_uint(64)
    infos = (Info * 64)()
    rc = nvml.nvmlDeviceGetComputeRunningProcesses_v3(dev, ctypes.byref(n), infos)
    return rc, [(infos[i].pid, infos[i].used >> 20) for i in range(n.value)]


print("before", processes())
child = subprocess.Popen([sys.executable, "-c", """
import torch, sys, time
x = torch.empty(3 << 28, dtype=torch.float32, device='cuda')  # 3 GiB
torch.cuda.synchronize(); print('allocated', flush=True); time.sleep(4)
y = torch.empty(2 << 28, dtype=torch.float32, device='cuda'); torch.cuda.synchronize(); print('more', flush=True)
time.sleep(4)
"""], stdout=subprocess.PIPE, text=True)
print("child pid (ours)", child.pid, "our pid", os.getpid())
try:
    with open(f"/proc/{child.pid}/status") as f:
        print([l.strip() for l in f if l.startswith("NSpid")])
except OSError as e:
    print("status", e)
print(child.stdout.readline().strip())
t0 = time.time()
for _ in range(6):
    print(round(time.time() - t0, 3), processes())
    time.sleep(0.5)
print(child.stdout.readline().strip())
for _ in range(4):
    print(round(time.time() - t0, 3), processes())
    time.sleep(0.25)
child.wait()
print("after", processes())
# The cost of one query.
t = time.perf_counter()
for _ in range(100):
    processes()
print("query ms", (time.perf_counter() - t) * 10)
PY
