"""device_hog.py FREE_MB HOLD_S READY: a process outside anvil that takes all but FREE_MB of the device's memory
(plain torch allocations, 256 MiB each), touches it, creates READY, holds it HOLD_S seconds and exits (issue 38,
item 3: a device-memory hog started by the test)."""
import sys
import time
from pathlib import Path

import torch

free_mb, hold_s, ready = int(sys.argv[1]), float(sys.argv[2]), Path(sys.argv[3])
blocks = []
chunk = 256 << 20
while True:
    free, _ = torch.cuda.mem_get_info()
    want = free - (free_mb << 20)
    if want <= 0:
        break
    blocks.append(torch.ones(min(chunk, want), dtype=torch.uint8, device="cuda"))
torch.cuda.synchronize()
print(f"hog: holds {sum(b.numel() for b in blocks) >> 20} MiB, {torch.cuda.mem_get_info()[0] >> 20} MiB free",
      flush=True)
ready.touch()
time.sleep(hold_s)
