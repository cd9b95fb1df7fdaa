#!/bin/bash
# A new device buffer's zeroing against an importer's first write (python/anvil_py/device_buffers.py new_buffer),
# on the code before the fix (as at d59cd8d: zero_ queued on the busy current stream, made here from the tree's
# file) and on the tree's; the old code should read zeros (sum 0) where the race shows, the new 12288.
#  - "one process": the write from a second stream of the same process. Measured on an H100 (2026-12-06): both
#    read 12288, 3 of 3: within one process the write waits for the zeroing, so this shows nothing.
#  - "two processes": the write from another process that imported the buffer, as the candidate's worker does
#    (not yet run).
#   run(command="bash bench/scripts/zeroing_race_gpu.sh", carry=[".whl"])
set -u
cd "$(dirname "$0")/../.."
OLD=$(mktemp -d)
mkdir -p "$OLD/anvil_py"
python3 - "$OLD/anvil_py/device_buffers.py" <<'PY'
import re, sys
s = open("python/anvil_py/device_buffers.py").read()
old, n = re.subn(r"    stream = _zeroing_stream\(device\)\n    with torch.cuda.stream\(stream\):\n        whole.zero_\(\)\n"
                 r"    stream.synchronize\(\)\n", "    whole.zero_()\n", s)
assert n == 1, "the fix is not where this script expects it"
open(sys.argv[1], "w").write(old)
PY
touch "$OLD/anvil_py/__init__.py"
# Work queued on the maker's stream between the buffer's mapping as a tensor and its zeroing (another thread's).
BUSY='
made = device_buffers._tensor
def then_busy(*a):
    got = made(*a)
    torch.cuda._sleep(2_000_000_000)
    return got
device_buffers._tensor = then_busy'
ONE="
import torch
from anvil_py import device_buffers
writer = torch.cuda.Stream()
with torch.cuda.stream(writer):
    threes = torch.full((4096,), 3.0, device='cuda')
torch.cuda.synchronize()
$BUSY
fd, buf = device_buffers.new_buffer(0, torch.float32, [4096])
with torch.cuda.stream(writer):
    buf.copy_(threes)
torch.cuda.synchronize()
print(float(buf.double().sum()))"
CHILD='
import socket, sys, torch
from anvil_py import device_buffers
s = socket.socket(fileno=int(sys.argv[1]))
threes = torch.full((4096,), 3.0, device="cuda")
torch.cuda.synchronize()
s.send(b"ready")
_, fds, _, _ = socket.recv_fds(s, 16, 1)
t = device_buffers.import_buffer(fds[0], 0, torch.float32, [4096])
t.copy_(threes)
torch.cuda.synchronize()
s.send(b"done")'
TWO="
import os, socket, subprocess, sys, torch
from anvil_py import device_buffers
torch.zeros(1, device='cuda')
a, b = socket.socketpair()
child = subprocess.Popen([sys.executable, '-c', os.environ['CHILD'], str(b.fileno())], pass_fds=[b.fileno()])
assert a.recv(16) == b'ready'
$BUSY
fd, buf = device_buffers.new_buffer(0, torch.float32, [4096])
socket.send_fds(a, [b'x'], [fd])
assert a.recv(16) == b'done'
torch.cuda.synchronize()
child.wait()
print(float(buf.double().sum()))"
export CHILD
for i in 1 2 3; do
  for code in old new; do
    path=$OLD; [ $code = new ] && path=$PWD/python
    echo "one process, $code $i: $(PYTHONPATH=$path python3 -c "$ONE" 2>&1 | tail -1)"
    echo "two processes, $code $i: $(PYTHONPATH=$path timeout 60 python3 -c "$TWO" 2>&1 | tail -1)"
  done
done
