"""KernelBench problems at small sizes, for runs on the CPU machine: each problem's own file with its size lines
replaced, made at run time from ../shared/kernelbench (never copied). The replacements are data, derived once by this
script and kept in bench/kernelbench_small.json, like tests/redteam/sweep/tasks.json (whose hand-made sizes come
first: the red-team sweep's honest kernels were written for them).

    python3 bench/scripts/shrink_kernelbench.py derive [--kernelbench ROOT] [--out bench/kernelbench_small.json]
    python3 bench/scripts/shrink_kernelbench.py make DIR [--kernelbench ROOT] [--levels 1,2] [--limit N]

`derive` takes each problem's top-level integer assignments (`batch_size = 4096`, `M = 1024 * 2`, `shape = (64, 64)`)
and divides those of 32 and more by 2, 4, 8, ... (batch sizes become 2) until the inputs and parameters hold at
most 2^20 elements each on the meta device (python/anvil_py/task_spec.py); then the reference runs once for real on
the CPU at that size, in a child process with a 60 s deadline, and must finish within 2 s with finite outputs. A
problem that no factor brings there is listed with the reason. `make` writes level{L}/{P}_{Name}.py under DIR.
"""

import argparse
import ast
import glob
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SWEEP_TASKS = ROOT / "tests" / "redteam" / "sweep" / "tasks.json"
DEFAULT_OUT = ROOT / "bench" / "kernelbench_small.json"
LIMIT_ELEMENTS = 1 << 20
LIMIT_SECONDS = 2.0
FACTORS = [2 ** k for k in range(0, 15)]

CHECK = r"""
import json, math, sys, time
import torch
sys.path.insert(0, sys.argv[2])
from anvil_py.task_loader import load_task
torch.set_num_threads(1)
_, Model, get_inputs, get_init_inputs = load_task(sys.argv[1])
torch.manual_seed(0)
model = Model(*get_init_inputs())
inputs = get_inputs()
start = time.monotonic()
with torch.no_grad():
    out = model(*inputs)
seconds = time.monotonic() - start
outs = out if isinstance(out, (list, tuple)) else [out]
finite = all(not torch.is_tensor(o) or not o.is_floating_point() or bool(torch.isfinite(o).all()) for o in outs)
print(json.dumps({"seconds": seconds, "finite": finite}))
"""


def size_lines(source):
    """(line text, name, value) of each top-level `NAME = <int expression or tuple of them>` on one line."""
    tree = ast.parse(source)
    lines = source.splitlines()
    found = []
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        if node.lineno != node.end_lineno:
            continue
        try:
            value = ast.literal_eval(node.value) if not isinstance(node.value, ast.BinOp) else eval(  # noqa: S307
                compile(ast.Expression(node.value), "<size>", "eval"), {"__builtins__": {}})
        except Exception:
            continue
        ints = value if isinstance(value, tuple) else (value,)
        if ints and all(isinstance(v, int) and not isinstance(v, bool) for v in ints):
            found.append((lines[node.lineno - 1], node.targets[0].id, value))
    return found


def shrunk(name, value, factor):
    def one(v):
        if "batch" in name.lower():
            return min(v, 2) if factor > 1 else v
        return max(v // factor, 16) if v >= 32 else v

    return tuple(one(v) for v in value) if isinstance(value, tuple) else one(value)


def replacements(source, factor):
    out = []
    for line, name, value in size_lines(source):
        new = shrunk(name, value, factor)
        if new != value:
            indent = line[:len(line) - len(line.lstrip())]
            out.append([line, f"{indent}{name} = {new!r}"])
    return out


def apply(source, replace):
    for old, new in replace:
        if source.count(old) != 1:
            raise ValueError(f"the line {old!r} is not there exactly once")
        source = source.replace(old, new)
    return source


def elements(task_path):
    """Elements of the inputs and of the parameters, on the meta device."""
    from anvil_py import task_spec
    spec = task_spec.derive(task_path)

    def count(entries):
        total = 0
        for e in entries:
            n = 1
            for d in e.get("shape", []):
                n *= d
            total += n
        return total

    return count(spec.get("inputs", [])), count(spec.get("params", []))


def derive(args):
    sys.path.insert(0, str(ROOT / "python"))
    warnings.simplefilter("ignore")
    sweep = json.loads(SWEEP_TASKS.read_text())
    by_problem = {}
    for name, spec in sorted(sweep.items()):  # The first variant of a problem (no dtype change) wins.
        if not any("dtype" in new for _, new in spec["replace"]):
            by_problem.setdefault(spec["kernelbench"], {"replace": spec["replace"], "from": f"redteam:{name}"})
    result, skipped = {}, {}
    files = sorted(glob.glob(os.path.join(args.kernelbench, "level*", "*.py")))
    with tempfile.TemporaryDirectory(prefix="anvil-shrink-") as tmp:
        for f in files:
            rel = os.path.relpath(f, args.kernelbench)
            source = Path(f).read_text()
            path = Path(tmp) / Path(f).name
            started = time.monotonic()
            if rel in by_problem:
                result[rel] = by_problem[rel]
                continue
            why = "no factor brings the inputs and parameters under 2^20 elements"
            for factor in FACTORS:
                replace = replacements(source, factor)
                path.write_text(apply(source, replace))
                try:
                    n_in, n_param = elements(str(path))
                except Exception as e:
                    why = f"{type(e).__name__}: {str(e)[:120]}"
                    continue
                if n_in > LIMIT_ELEMENTS or n_param > LIMIT_ELEMENTS:
                    continue
                try:
                    run = subprocess.run([sys.executable, "-c", CHECK, str(path), str(ROOT / "python")],
                                         capture_output=True, text=True, timeout=60)
                except subprocess.TimeoutExpired:
                    why = f"factor {factor}: the reference ran past 60 s"
                    continue
                if run.returncode != 0:
                    why = f"factor {factor}: {(run.stderr.strip().splitlines() or ['?'])[-1][:160]}"
                    continue
                got = json.loads(run.stdout.strip().splitlines()[-1])
                if not got["finite"]:
                    why = f"factor {factor}: outputs not finite"
                    continue
                if got["seconds"] > LIMIT_SECONDS:
                    why = f"factor {factor}: the reference took {got['seconds']:.1f} s"
                    continue
                result[rel] = {"replace": replace, "from": f"factor {factor}", "inputs": n_in, "parameters": n_param,
                               "reference_s": round(got["seconds"], 3)}
                break
            else:
                skipped[rel] = why
            print(f"{rel}: {result[rel]['from'] if rel in result else 'skipped: ' + skipped[rel]} "
                  f"({time.monotonic() - started:.1f} s)", flush=True)
    out = {"about": "KernelBench problems at small sizes: bench/scripts/shrink_kernelbench.py derive",
           "problems": result, "skipped": skipped}
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    print(f"{len(result)} of {len(files)} problems shrunk; {len(skipped)} skipped -> {args.out}")


def make(args):
    data = json.loads(Path(args.table).read_text())
    levels = {int(x) for x in args.levels.split(",")} if args.levels else None
    made = 0
    for rel, spec in sorted(data["problems"].items(), key=lambda kv: (kv[0].split("/")[0], int(
            Path(kv[0]).name.split("_")[0]))):
        level = int(rel.split("/")[0].removeprefix("level"))
        if levels and level not in levels:
            continue
        if args.limit and made >= args.limit:
            break
        source = Path(args.kernelbench) / rel
        if not source.is_file():
            sys.exit(f"shrink_kernelbench.py: {source} is missing: pass --kernelbench ROOT")
        target = Path(args.dir) / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(apply(source.read_text(), spec["replace"]))
        made += 1
    print(f"{made} problems written under {args.dir}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("derive")
    d.add_argument("--kernelbench", default=str(ROOT.parent / "shared" / "kernelbench"))
    d.add_argument("--out", default=str(DEFAULT_OUT))
    m = sub.add_parser("make")
    m.add_argument("dir")
    m.add_argument("--kernelbench", default=str(ROOT.parent / "shared" / "kernelbench"))
    m.add_argument("--table", default=str(DEFAULT_OUT))
    m.add_argument("--levels", default="")
    m.add_argument("--limit", type=int, default=0)
    args = parser.parse_args()
    derive(args) if args.command == "derive" else make(args)


if __name__ == "__main__":
    main()
