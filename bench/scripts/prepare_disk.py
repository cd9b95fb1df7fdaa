"""What preparing a task writes to the cache, with the task server (no trial files) and through files.

Its `files` side runs `--trial-data files`, retired after commit 0621339: to reproduce, run it from a checkout of that
commit.

Judges one honest candidate of a 64 MiB ReLU (4096 x 4096 float32: 128 MiB a trial, inputs and outputs) on a fresh
cache per mode, `--trial-data server` (the default: prepare writes no trial's or timing set's tensors) and `files`,
and reports the prepared folder's bytes, `prepare`'s seconds and the verdict. The cache's filesystem is sampled
every 50 ms meanwhile (its used bytes, from statvfs), the peak above the start reported too.

    .venv/bin/python bench/scripts/prepare_disk.py [--anvil build/anvil] [--runs 2] [--side 4096]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

TASK = """import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn({side}, {side})]


def get_init_inputs():
    return []
"""


def used_bytes(path):
    st = os.statvfs(path)
    return (st.f_blocks - st.f_bfree) * st.f_frsize


def folder_bytes(path):
    return sum(f.stat().st_size for f in Path(path).rglob("*") if f.is_file())


def judge(anvil, task, candidate, cache, mode):
    """(verdict, prepared folder bytes, peak used bytes of the cache's filesystem above the start)."""
    start = used_bytes(cache)
    peak = [start]
    done = threading.Event()

    def sample():
        while not done.wait(0.05):
            peak[0] = max(peak[0], used_bytes(cache))

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        proc = subprocess.run([anvil, "eval", "--json", "-q", "--cache-dir", str(cache), "-t", str(task), "-c",
                               str(candidate), "--baselines", "none", "--trial-data", mode],
                              capture_output=True, text=True, timeout=900)
    finally:
        done.set()
        sampler.join()
    if not proc.stdout.strip():
        sys.exit(f"anvil printed no verdict: {proc.stderr[-2000:]}")
    verdict = json.loads(proc.stdout)
    prepared = sum(folder_bytes(p) for p in (cache / "tasks").iterdir() if p.is_dir())
    return verdict, prepared, peak[0] - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--anvil", default=str(ROOT / "build" / "anvil"))
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--side", type=int, default=4096)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="anvil-prepare-disk-"))
    try:
        task = work / "relu_big.py"
        task.write_text(TASK.format(side=args.side))
        candidate = ROOT / "examples" / "candidates" / "relu" / "pass_native.cpp"
        print("| mode | run | verdict | wall s | prepare s (waited) | prepared folder MiB | peak used MiB above start |"
              " timing sets |")
        print("|---|---|---|---|---|---|---|---|")
        for run in range(args.runs):
            for mode in ("server", "files"):
                cache = work / f"cache_{mode}_{run}"
                cache.mkdir()
                v, prepared, peak = judge(args.anvil, task, candidate, cache, mode)
                perf = (v.get("gates") or {}).get("perf") or {}
                print(f"| {mode} | {run} | {v['status']} | {v.get('seconds') or 0:.2f} |"
                      f" {v['stage_seconds'].get('prepare', 0):.2f} |"
                      f" {prepared / 2**20:.1f} | {peak / 2**20:.1f} | {perf.get('timing_sets')} |", flush=True)
                shutil.rmtree(cache)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
