"""Trial data from files against the task server on the CPU backend (issue 38, steps 1-2): the same candidates of
a large streamed task judged both ways in one `anvil eval` each, with what each verdict spent making trials and how
much the scratch filesystems held meanwhile.

Its `files` side runs `--trial-data files`, retired after commit 0621339: to reproduce, run it from a checkout of that
commit.

    python3 bench/scripts/trial_server_cpu.py [--elements 33554432] [--candidates 4] [--out bench/results/trial_server_cpu.md]

The task: ReLU on `--elements` float32 (128 MiB in, 128 MiB out a trial at the default), 5 trials, streamed
(`--max-trial-bytes 64M`: too large to cache, as half of KernelBench's level 1 is at its real sizes on a GPU). The
candidates: copies of examples/candidates/relu/pass_native.cpp (an OpenMP loop), each a file of its own. Both runs
share one cache folder, prepared and built by a warm-up run first. /dev/shm and the temporary folder are sampled
every 50 ms while each run lasts (used bytes of their filesystems, less what they held before).
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


def used(path):
    s = os.statvfs(path)
    return (s.f_blocks - s.f_bfree) * s.f_frsize


def judge(anvil, jobs, cache, mode, extra=()):
    """(verdicts, wall seconds, peak extra bytes on /dev/shm, on the temporary folder's filesystem)."""
    tmp = tempfile.gettempdir()
    base = {"/dev/shm": used("/dev/shm"), tmp: used(tmp)}
    peak = dict.fromkeys(base, 0)
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            for p in base:
                peak[p] = max(peak[p], used(p) - base[p])
            time.sleep(0.05)

    t = threading.Thread(target=sample)
    t.start()
    start = time.time()
    out = jobs.with_suffix(f".{mode}.verdicts.jsonl")
    p = subprocess.run([anvil, "eval", "--list", str(jobs), "--json", "-q", "-o", str(out), "--cache-dir", str(cache), "-j", "1",
                        "--timeout", "120", "--max-trial-bytes", str(64 << 20), "--baselines", "none", "--trial-data", mode,
                        *extra], capture_output=True, text=True, timeout=3600)
    wall = time.time() - start
    stop.set()
    t.join()
    if p.returncode not in (0, 1):
        sys.exit(f"anvil eval ({mode}) failed: {p.stderr[-2000:]}")
    verdicts = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    return verdicts, wall, peak["/dev/shm"], peak[tmp]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--elements", type=int, default=1 << 25)
    ap.add_argument("--candidates", type=int, default=4)
    ap.add_argument("--anvil", default=str(ROOT / "build" / "anvil"))
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "trial_server_cpu.md"))
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="anvil-trial-server-bench-"))
    try:
        task = work / "big_relu.py"
        task.write_text(f"import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
                        f"        return torch.relu(x)\ndef get_inputs():\n    return [torch.randn({args.elements})]\n"
                        f"def get_init_inputs():\n    return []\n")
        source = (ROOT / "examples" / "candidates" / "relu" / "pass_native.cpp").read_text()
        lists = {}
        for run in ("warm", "files", "server"):
            lines = []
            for i in range(args.candidates if run != "warm" else 1):
                c = work / run / f"c{i}.cpp"
                c.parent.mkdir(exist_ok=True)
                c.write_text(f"// {run} {i}\n" + source)
                lines.append(json.dumps({"task": str(task), "candidate": str(c)}))
            lists[run] = work / f"{run}.jsonl"
            lists[run].write_text("\n".join(lines) + "\n")
        cache = work / "cache"
        judge(args.anvil, lists["warm"], cache, "files")
        rows = {}
        for mode in ("files", "server"):
            rows[mode] = judge(args.anvil, lists[mode], cache, mode)
        trial_mib = args.elements * 4 * 2 / 2**20
        lines = [f"# Trial data: files against the task server, CPU backend (issue 38, steps 1-2)", "",
                 f"Command: `python3 bench/scripts/trial_server_cpu.py --elements {args.elements} --candidates "
                 f"{args.candidates}` on the CPU machine ({os.cpu_count()} cores); anvil at "
                 f"{subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], cwd=ROOT, capture_output=True, text=True).stdout.strip()}.",
                 "", f"Task: ReLU on {args.elements} float32, {trial_mib:.0f} MiB of inputs and outputs a trial, 5 "
                 "trials, streamed (`--max-trial-bytes 64M`). Candidates: copies of "
                 "examples/candidates/relu/pass_native.cpp, one `anvil eval -j 1` per mode, after a warm-up that "
                 "prepared the task and built the candidate. Peaks: used bytes of the filesystem over what it held "
                 "before the run, sampled every 50 ms.", "",
                 "| mode | verdicts | wall s | s per verdict | make_trials s (mean) | run s (mean) | compare s (mean) "
                 "| /dev/shm peak MiB | TMPDIR fs peak MiB |", "|---|---|---|---|---|---|---|---|---|"]
        for mode, (verdicts, wall, shm, tmp) in rows.items():
            statuses = sorted({v["status"] for v in verdicts})
            def mean(stage):
                return sum(v["stage_seconds"].get(stage, 0) for v in verdicts) / max(len(verdicts), 1)
            lines.append(f"| {mode} | {len(verdicts)} ({', '.join(statuses)}) | {wall:.1f} | {wall / len(verdicts):.2f} "
                         f"| {mean('make_trials'):.2f} | {mean('run'):.2f} | {mean('compare'):.2f} | "
                         f"{shm / 2**20:.0f} | {tmp / 2**20:.0f} |")
        lines += ["", "With `server` the first verdict's `make_trials` includes starting the task server and making "
                  "the task's trials there (kept for the others while they fit its budget: half of MemAvailable)."]
        Path(args.out).write_text("\n".join(lines) + "\n")
        print("\n".join(lines))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
