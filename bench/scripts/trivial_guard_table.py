"""The trivial-output guard over KernelBench's problems (issue 33, step 5): for each problem of ../shared/kernelbench,
what the guard of policy musacoder decides when the task is prepared: untouched, tightened (an output's atol scaled to
its magnitude, or a held-out set added), or degenerate (a trivial output passes every set the guard tries).

    python3 bench/scripts/trivial_guard_table.py --out bench/results/trivial_guard_cpu.md [--sizes auto|small]
        [--kernelbench ROOT] [--only level2/23] [--deadline 300] [--device cpu|cuda] [--jobs N]
        [--stop-after S --resume OUT.jsonl]

Each problem is prepared by anvil's own task worker (`python -m anvil_py.task_worker prepare --guard ...`, the
trusted side; `--device cuda` on a GPU machine) with musacoder's tolerances, 5 trials and 8 guard seeds, in a child
with a deadline and a memory limit (prlimit). Sizes: `auto` takes the real size where one trial (inputs + outputs,
from the spec derived on the meta device) is under 256 MiB, else the shrunk size of bench/kernelbench_small.json; on
cuda, a problem with no shrunk size runs at its real size up to 8 GiB a trial, marked so. `small` takes the shrunk
size wherever there is one (the CPU machine's choice: real sizes take minutes per forward there). Each row says
which size it ran at. Nothing is copied: shrunk files are made at run time in a temporary folder.
"""

import argparse
import concurrent.futures
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import shrink_kernelbench  # noqa: E402

# The project venv's Python; on a GPU machine without one, the Python running this script (with its torch).
PYTHON = ROOT / ".venv" / "bin" / "python" if (ROOT / ".venv" / "bin" / "python").exists() else Path(sys.executable)
PYTHONPATH = os.pathsep.join(filter(None, [str(ROOT / "python"), os.environ.get("PYTHONPATH")]))
REAL_LIMIT_BYTES = 256 << 20
GPU_REAL_LIMIT_BYTES = 8 << 30  # On cuda, problems with no shrunk size run at their real size up to this.
GUARD = json.dumps({"tolerance": {"float32": [1e-4, 1e-4], "float64": [1e-6, 1e-6], "float16": [1e-2, 1e-2],
                                  "bfloat16": [1e-2, 1e-2]}, "nan_equal": True})
DTYPE_BYTES = {"float32": 4, "float64": 8, "float16": 2, "bfloat16": 2, "int64": 8, "int32": 4, "int16": 2,
               "int8": 1, "uint8": 1, "bool": 1}


def trial_bytes(task):
    """Inputs + outputs of one trial, from the spec derived on the meta device (None when it cannot be derived)."""
    out = subprocess.run([str(PYTHON), "-m", "anvil_py.task_spec", str(task)], capture_output=True, text=True,
                         timeout=300, env=dict(os.environ, PYTHONPATH=PYTHONPATH))
    try:
        spec = json.loads(out.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        return None
    if "error" in spec:
        return None
    total = 0
    for e in spec.get("inputs", []) + spec.get("outputs", []):
        n = 1
        for d in e.get("shape", []):
            n *= d
        total += n * DTYPE_BYTES.get(e.get("dtype", ""), 0)
    return total


def prepare(task, out, deadline, memory_bytes, device="cpu"):
    seeds = lambda n: ",".join(str(random.SystemRandom().randrange(1 << 62)) for _ in range(n))
    limit = ["prlimit", f"--as={memory_bytes}"] if device == "cpu" else []  # CUDA maps far more than it uses.
    cmd = [*limit, str(PYTHON), "-m", "anvil_py.task_worker", "prepare", "--task",
           str(task), "--out", str(out), "--device", device, "--seeds", seeds(5), "--guard", GUARD, "--guard-seeds",
           seeds(8), "--tf32", "off"]
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=deadline,
                              env=dict(os.environ, PYTHONPATH=PYTHONPATH, OMP_NUM_THREADS="2"))
    except subprocess.TimeoutExpired:
        return None, f"not run: the reference took over {deadline} s", time.monotonic() - start
    seconds = time.monotonic() - start
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["?"])[-1]
        if "enforce fail" in last or "MemoryError" in last or "std::bad_alloc" in last:
            return None, f"not run: over the {memory_bytes / 2**30:g} GiB memory limit", seconds
        return None, f"not run: the task worker failed ({last[:160]})", seconds
    return json.loads((out / "spec.json").read_text()), "", seconds


def classify(spec):
    if spec.get("degenerate"):
        return "degenerate", spec["degenerate"]
    guard = spec.get("trivial_guard", {})
    if "skipped" in guard:
        return "not run", guard["skipped"]
    sets = [h["guard"] for h in spec.get("held_out", []) if isinstance(h, dict) and "guard" in h]
    details = [f"{name}: {entry['why']}" for name, entry in sorted(guard.items())]
    if sets:
        details.append("held-out sets added: " + ", ".join(sets))
    return ("tightened", "; ".join(details)) if details else ("untouched", "")


def machine(device):
    """ on <GPU name> for the cuda device: the table's numbers depend on it."""
    if device != "cuda":
        return ""
    try:
        name = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                              text=True, timeout=30).stdout.strip().splitlines()[0]
    except (OSError, subprocess.TimeoutExpired, IndexError):
        return ""
    return f" on one {name}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kernelbench", default=str(ROOT.parent / "shared" / "kernelbench"))
    ap.add_argument("--sizes", choices=("auto", "small"), default="auto")
    ap.add_argument("--only", default="", help="problems whose path contains this")
    ap.add_argument("--deadline", type=float, default=300)
    ap.add_argument("--memory-gib", type=float, default=8, help="address-space limit of each run (cpu only)")
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("--jobs", type=int, default=1, help="problems prepared at once")
    ap.add_argument("--stop-after", type=float, default=0, help="seconds; problems not started by then are left "
                    "for a run with --resume")
    ap.add_argument("--resume", help="a .jsonl of an earlier run: its rows are kept")
    ap.add_argument("--progress", help="a .jsonl each row is appended to as soon as it is made (it survives a run "
                    "that is cut off)")
    ap.add_argument("--machine", help="the machine the rows were made on, for the table's header (default: asked "
                    "of nvidia-smi on cuda)")
    ap.add_argument("--out", help="the markdown table; JSON lines go beside it (.jsonl)")
    args = ap.parse_args()
    small = json.loads((ROOT / "bench" / "kernelbench_small.json").read_text())["problems"]
    root = Path(args.kernelbench)
    problems = sorted((p for p in root.glob("level*/*.py") if args.only in str(p.relative_to(root))),
                      key=lambda p: (p.parent.name, int(p.name.split("_")[0])))
    done = {}
    if args.resume and Path(args.resume).exists():
        for line in Path(args.resume).read_text().splitlines():
            row = json.loads(line)
            if not row["result"].startswith("not run") or "deadline of this run" not in row["detail"]:
                done[row["problem"]] = row
    to_run = sum(1 for source in problems if str(source.relative_to(root)) not in done)
    stop_at = time.monotonic() + args.stop_after if args.stop_after else None
    lock = threading.Lock()
    finished = [0]

    def one(source, tmp):
        rel = str(source.relative_to(root))
        if rel in done:
            return done[rel]
        if stop_at is not None and time.monotonic() > stop_at:
            return {"problem": rel, "size": "-", "result": "not run", "detail": "past the deadline of this run "
                    "(--stop-after); run again with --resume", "seconds": 0}
        row = run_one(source, rel, tmp)
        with lock:
            if args.progress:
                with open(args.progress, "a") as f:
                    f.write(json.dumps(row) + "\n")
            finished[0] += 1
            print(f"[{finished[0]}/{to_run}] {rel} ({row['size']}): {row['result']} "
                  f"{row['detail'][:100]}", file=sys.stderr, flush=True)
        return row

    def run_one(source, rel, tmp):
        real_bytes = trial_bytes(source) if args.sizes == "auto" or rel not in small else None
        use_real = rel not in small if args.sizes == "small" else (real_bytes is not None and
                                                                   real_bytes < REAL_LIMIT_BYTES)
        size = "real"
        task = source
        if not use_real and rel not in small and args.device == "cuda" and (
                real_bytes is None or real_bytes < GPU_REAL_LIMIT_BYTES):
            # No shrunk size, and the GPU machine holds the real one: better than no row.
            use_real = True
            size = (f"real ({real_bytes / 2**20:.0f} MiB: no shrunk size)" if real_bytes else
                    "real (its size cannot be derived on the meta device)")
        if not use_real:
            if rel not in small:
                return {"problem": rel, "size": "-", "result": "not run",
                        "detail": f"a trial is {real_bytes / 2**20:.0f} MiB at its real size and no shrunk "
                                  "size exists" if real_bytes else "no size to run it at", "seconds": 0}
            task = Path(tmp) / rel
            task.parent.mkdir(parents=True, exist_ok=True)
            task.write_text(shrink_kernelbench.apply(source.read_text(), small[rel]["replace"]))
            size = "shrunk"
        out = Path(tmp) / "prepared" / rel.replace("/", "_")
        spec, problem, seconds = prepare(task, out, args.deadline, int(args.memory_gib * 2**30), args.device)
        shutil.rmtree(out, ignore_errors=True)  # Trials at real sizes are hundreds of MB each.
        result, detail = classify(spec) if spec else ("not run", problem)
        return {"problem": rel, "size": size, "result": result, "detail": detail, "seconds": round(seconds, 1)}

    with tempfile.TemporaryDirectory(prefix="anvil-guard-table-") as tmp:
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            rows = list(pool.map(lambda source: one(source, tmp), problems))
    counts = {}
    for r in rows:
        counts[r["result"]] = counts.get(r["result"], 0) + 1
    lines = [f"# The trivial-output guard over {len(rows)} KernelBench problems (policy musacoder)", "",
             f"Command: `python3 bench/scripts/trivial_guard_table.py --sizes {args.sizes} --device {args.device}"
             + (f" --only {args.only}" if args.only else "") + "`" + (f" on {args.machine}" if args.machine else machine(args.device)) + ".", "",
             "Counts: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())), "",
             "Degenerate: " + (", ".join(r["problem"] + " (" + r["detail"] + ")" for r in rows
                                         if r["result"] == "degenerate") or "none"), "",
             "| problem | size | result | detail | s |", "|---|---|---|---|---|"]
    lines += [f"| {r['problem']} | {r['size']} | {r['result']} | {r['detail']} | {r['seconds']} |" for r in rows]
    text = "\n".join(lines) + "\n"
    if args.out:
        Path(args.out).write_text(text)
        Path(args.out).with_suffix(".jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
