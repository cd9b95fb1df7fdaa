"""The KernelBench baseline table: every problem at its real size, eager and torch.compile.

For each problem: its input bytes, and eager / torch.compile median times measured the way anvil times
candidates (anvil_py.timing: CUDA events, L2 flush of twice the L2 size, warmup). Inputs are made directly on
the device. Workers are child processes that write one JSON line per problem; a worker that dies (crash, CUDA
error) is restarted after the problem it died on, which is listed with the reason — none vanish.

Phase 1 times eager for every problem in one worker. Phase 2 runs several torch.compile workers: compilation
(CPU work) overlaps, while a file lock gives the GPU to one timing loop at a time. A time budget bounds the
run; problems it leaves unmeasured say so.

  python -m anvil_py.baseline_table --root KERNELBENCH --out results.jsonl [--budget-s 500]
  python -m anvil_py.baseline_table --render results.jsonl > table.md
"""

import argparse
import fcntl
import json
import os
import subprocess
import sys
import time


def problems_under(root):
    out = []
    for level in sorted(os.listdir(root)):
        if level.startswith("level") and level[5:].isdigit():
            names = [n for n in os.listdir(os.path.join(root, level)) if n.endswith(".py")]
            names.sort(key=lambda n: int(n.split("_")[0]) if n.split("_")[0].isdigit() else 0)
            out += [os.path.join(root, level, n) for n in names]
    return out


class GpuLock:
    """Gives the GPU to one timing loop at a time across worker processes."""

    def __init__(self, path):
        self.fd = os.open(path, os.O_CREAT | os.O_RDWR) if path else None

    def __enter__(self):
        if self.fd is not None:
            fcntl.flock(self.fd, fcntl.LOCK_EX)

    def __exit__(self, *_):
        if self.fd is not None:
            fcntl.flock(self.fd, fcntl.LOCK_UN)


def _measure(path, mode, args, lock):
    import torch

    from anvil_py.task_loader import load_task
    from anvil_py.timing import Timer

    row = {"problem": os.path.basename(path)[:-3], "mode": mode}
    device = torch.device(args.device)
    try:
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False
        _, Model, get_inputs, get_init_inputs = load_task(path)
        torch.manual_seed(42)
        with torch.device(device):
            model = Model(*get_init_inputs()).to(device)
            inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in get_inputs()]
        row["input_bytes"] = sum(x.numel() * x.element_size() for x in inputs if isinstance(x, torch.Tensor))
        fn = model
        with torch.no_grad():
            if mode == "compile":
                t0 = time.perf_counter()
                fn = torch.compile(model)
                fn(*inputs)
                Timer(device).sync()
                row["compile_s"] = round(time.perf_counter() - t0, 2)
            with lock:
                times = Timer(device).time(lambda: fn(*inputs), args.warmup, args.iters)
        times.sort()
        row["median_ms"] = times[len(times) // 2]
        row["spread_ms"] = times[(3 * len(times)) // 4] - times[len(times) // 4]
    except torch.cuda.OutOfMemoryError as e:
        row["error"] = "out of GPU memory: " + str(e).splitlines()[0][:160]
    except Exception as e:  # noqa: BLE001 - every failure is a row of the table
        row["error"] = f"{type(e).__name__}: {(str(e).splitlines() or [''])[0][:200]}"
    finally:
        model = inputs = fn = None
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    return row


def worker(args):
    with open(args.problems) as f:
        paths = json.load(f)
    lock = GpuLock(args.lock)
    with open(args.results, "a") as out:
        for path in paths:
            out.write(json.dumps({"start": path}) + "\n")
            out.flush()
            row = _measure(path, args.mode, args, lock)
            row["path"] = path
            out.write(json.dumps(row) + "\n")
            out.flush()


def _read(results):
    done, started = {}, []
    if os.path.exists(results):
        for line in open(results):
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                continue
            if "start" in r:
                started.append(r["start"])
            else:
                done[r["path"]] = r
    return done, started


def run_phase(args, mode, paths, workers, deadline, tmp):
    """Runs `paths` over `workers` processes until done or `deadline`; returns {path: row}."""
    chunks = [paths[i::workers] for i in range(workers)]
    procs = []
    env = dict(os.environ, TORCHINDUCTOR_COMPILE_THREADS=str(max(1, (os.cpu_count() or 8) // workers)))
    for i, chunk in enumerate(chunks):
        procs.append({"left": chunk, "results": os.path.join(tmp, f"{mode}_{i}.jsonl"), "proc": None, "n": i})
    rows = {}
    while True:
        active = 0
        for w in procs:
            done, started = _read(w["results"])
            rows.update(done)
            if w["proc"] is not None and w["proc"].poll() is None:
                active += 1
                continue
            if w["proc"] is not None and w["proc"].returncode != 0 and started and started[-1] not in done:
                crashed = started[-1]  # The worker died on this problem.
                rows[crashed] = {"path": crashed, "problem": os.path.basename(crashed)[:-3],
                                 "error": f"worker died (exit {w['proc'].returncode})"}
            w["left"] = [p for p in w["left"] if p not in rows]
            if w["left"] and time.time() < deadline:
                plist = w["results"] + ".pending"
                with open(plist, "w") as f:
                    json.dump(w["left"], f)
                cmd = [sys.executable, "-m", "anvil_py.baseline_table", "--worker", "--mode", mode, "--problems",
                       plist, "--results", w["results"], "--lock", os.path.join(tmp, "gpu.lock"), "--device",
                       args.device, "--warmup", str(args.warmup), "--iters", str(args.iters)]
                w["proc"] = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                             start_new_session=True)
                active += 1
        if active == 0:
            break
        if time.time() >= deadline:
            for w in procs:
                if w["proc"] is not None and w["proc"].poll() is None:
                    os.killpg(w["proc"].pid, 9)
                    w["proc"].wait()
            for w in procs:
                rows.update(_read(w["results"])[0])
            break
        time.sleep(1)
    return rows


def render(jsonl, title):
    rows = [json.loads(line) for line in open(jsonl) if line.strip()]
    fmt = lambda v: "-" if v is None else f"{v:.3f}"
    lines = [f"# {title}", "", "| problem | level | input bytes | eager ms | torch.compile ms | note |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        note = "; ".join(x for x in (r.get("eager_error"), r.get("compile_error")) if x)
        size = "-" if r.get("input_bytes") is None else f"{r['input_bytes']:,}"
        lines.append(f"| {r['problem']} | {r['level']} | {size} | {fmt(r.get('eager_ms'))} | "
                     f"{fmt(r.get('compile_ms'))} | {note.replace('|', '/')} |")
    ok_e = sum(1 for r in rows if r.get("eager_ms") is not None)
    ok_c = sum(1 for r in rows if r.get("compile_ms") is not None)
    lines += ["", f"{len(rows)} problems; eager measured for {ok_e}, torch.compile for {ok_c}."]
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--root")
    ap.add_argument("--out")
    ap.add_argument("--render")
    ap.add_argument("--title", default="KernelBench baselines")
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--mode", default="eager")
    ap.add_argument("--problems")
    ap.add_argument("--results")
    ap.add_argument("--lock")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--budget-s", type=float, default=500)
    ap.add_argument("--compile-workers", type=int, default=8)
    ap.add_argument("--tmp", default="/tmp/anvil-baselines")
    args = ap.parse_args(argv)
    if args.render:
        sys.stdout.write(render(args.render, args.title))
        return 0
    if args.worker:
        worker(args)
        return 0
    start = time.time()
    os.makedirs(args.tmp, exist_ok=True)
    paths = problems_under(args.root)
    eager = run_phase(args, "eager", paths, 1, start + args.budget_s * 0.4, args.tmp)
    compiled = run_phase(args, "compile", [p for p in paths if "error" not in eager.get(p, {"error": 1})],
                         args.compile_workers, start + args.budget_s, args.tmp)
    with open(args.out, "w") as f:
        for p in paths:
            e, c = eager.get(p, {}), compiled.get(p, {})
            row = {"problem": os.path.basename(p)[:-3], "level": int(os.path.basename(os.path.dirname(p))[5:]),
                   "input_bytes": e.get("input_bytes"), "eager_ms": e.get("median_ms"),
                   "eager_iqr_ms": e.get("spread_ms"), "compile_ms": c.get("median_ms"),
                   "compile_s": c.get("compile_s")}
            if e.get("error") or not e:
                row["eager_error"] = e.get("error", "not measured: time budget of this run spent")
            if "eager_error" in row:
                row["compile_error"] = "not run: eager failed"
            elif c.get("error") or not c:
                row["compile_error"] = c.get("error", "not measured: time budget of this run spent")
            f.write(json.dumps(row) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
