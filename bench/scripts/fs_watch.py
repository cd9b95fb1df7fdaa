"""Runs a command and samples the used bytes of the filesystems it may write, every 50 ms (issue 38's filesystem
target: during a multi-GB verdict the cache, TMPDIR and /dev/shm grow by at most the build's outputs + 64 MiB).

    python3 bench/scripts/fs_watch.py [--path DIR ...] [--interval S] [--json FILE] -- COMMAND ARGS...

Watched: each --path, $TMPDIR (or /tmp) and /dev/shm, one sample per filesystem (paths on the same device are
counted once, under the first name). Prints, per filesystem, the used bytes at the start, the peak and the peak's
growth over the start, and exits with the command's status. Other processes' writes to the same filesystems count
too: run it on a quiet machine.
"""

import argparse
import json
import os
import subprocess
import sys
import threading
import time


def used(path):
    st = os.statvfs(path)
    return (st.f_blocks - st.f_bfree) * st.f_frsize


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--path", action="append", default=[], help="a folder on a filesystem to watch (repeatable)")
    parser.add_argument("--interval", type=float, default=0.05)
    parser.add_argument("--json", help="also write the findings here")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command to run (put it after --)")
    watched = {}  # st_dev -> name
    for path in args.path + [os.environ.get("TMPDIR") or "/tmp", "/dev/shm"]:
        if os.path.isdir(path):
            watched.setdefault(os.stat(path).st_dev, path)
    start = {name: used(name) for name in watched.values()}
    peak = dict(start)
    done = threading.Event()

    def sample():
        while not done.wait(args.interval):
            for name in watched.values():
                peak[name] = max(peak[name], used(name))

    sampler = threading.Thread(target=sample)
    t0 = time.monotonic()
    sampler.start()
    try:
        code = subprocess.call(command)
    finally:
        done.set()
        sampler.join()
    found = [{"path": name, "start_bytes": start[name], "peak_bytes": peak[name],
              "growth_bytes": peak[name] - start[name]} for name in watched.values()]
    for f in found:
        print(f"{f['path']}: start {f['start_bytes'] / 2**20:.1f} MiB, peak {f['peak_bytes'] / 2**20:.1f} MiB,"
              f" growth {f['growth_bytes'] / 2**20:.1f} MiB", file=sys.stderr)
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"command": command, "seconds": time.monotonic() - t0, "exit": code, "filesystems": found},
                      out, indent=1)
    sys.exit(code)


if __name__ == "__main__":
    main()
