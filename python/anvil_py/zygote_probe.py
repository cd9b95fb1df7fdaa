"""A worker for the zygote's own tests (src/core/zygote_test.cc): `7` writes "fd-3!" to fd 3, says whether its
working folder holds marker.txt and what its temporary folder is, and exits 7; `sleep` sleeps for a minute; `kill-parent` kills its parent;
`cuda-fork` says whether it could still use CUDA (not a "bad fork" in torch's words); `alloc N` writes N MiB of
memory, then says "allocated" (src/core/cgroup_test.cc: its memory quota)."""

import os
import sys
import tempfile
import time

if __name__ == "__main__":
    if sys.argv[1:] == ["sleep"]:
        time.sleep(60)
        sys.exit(0)
    if sys.argv[1:] == ["cuda-fork"]:
        import torch
        print("bad fork" if torch.cuda._is_in_bad_fork() else "clean fork")
        sys.exit(0)
    if sys.argv[1:2] == ["alloc"]:
        block = b"x" * (int(sys.argv[2]) << 20)
        print("allocated", len(block) >> 20)
        sys.exit(0)
    if sys.argv[1:] == ["kill-parent"]:
        os.kill(os.getppid(), 9)
        sys.exit(0)
    os.write(3, b"fd-3!")
    print("cwd has marker.txt" if os.path.exists("marker.txt") else "cwd lacks marker.txt")
    print("tempdir " + tempfile.gettempdir())
    sys.exit(int(sys.argv[1]))
