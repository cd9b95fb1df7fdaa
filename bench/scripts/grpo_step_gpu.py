"""A simulated GRPO step on the GPU machine (issue 38, item 3, check 1): 128 candidates for 16 tasks (8 a group)
posted at once through the verl adapter (anvil_client/verl.py's compute_score) to `anvil serve --backend cuda`,
against `anvil eval --backend cuda --list` with the same -j on the same kind of candidates; and the two paths'
statuses side by side. Standard library only (anvil_client, the thing under test, is standard library too).

    python3 bench/scripts/grpo_step_gpu.py make [--kernelbench ../shared/kernelbench] [--out .kb/grpo]
        (here, on the CPU machine: writes the shrunk tasks and every run's candidates into the carried .kb/grpo)
    python3 bench/scripts/grpo_step_gpu.py run --anvil .carry/anvil [--dir .kb/grpo] [--jobs 4] [--out DIR]
        (there, from bench/scripts/grpo_step_gpu.sh: warm-up, then eval and serve, alternating while time allows)

Tasks: the 16 KernelBench problems of tests/gpu/kernelbench_run at small sizes (bench/kernelbench_small.json's
replacements; level3/1 and level3/2, which it skips, shrunk by hand below), so that verdicts are quick and the step
is bound by the builds and the service, not by multi-GB trials. A group of 8 on one task, like a GRPO group:
  samples 0-3  honest: the project's kernelbench-format CUDA candidate for the problem (load_inline);
  samples 4-5  wrong answers: the same with every output store of its extension perturbed (x * 1.0625 + 0.0625);
  sample 6     compile error in the CUDA source (an undefined identifier, as level_1_problem_94_sample_2);
  sample 7     compile error in the C++ source (a method Tensor does not have).
Each run's candidates carry the run's name in their CUDA source, so no build and no verdict of another run is
reused. To fit the device budget, builds are shared: a group's 4 honest samples share one build (they differ in a
Python comment only), and each failing kind builds once per run and extension family (2 families: the GEMM one
and the pointwise one), so a step makes 16 + 3 x 2 = 22 builds, not 128 (a real step's samples differ in their
code); every candidate's text is distinct, so no verdict is shared. The warm-up eval (its own candidates) prepares the 16 tasks and builds the precompiled headers
(torch's, slim and full host ones) before either timing.
"""

import argparse
import asyncio
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The snapshot of the repo's python/, include/, examples/ and tests/ that travels with the binary (.carry/src), so
# that a tree being edited meanwhile changes neither the candidates nor the client.
SRC = ROOT / ".carry" / "src" if (ROOT / ".carry" / "src").is_dir() else ROOT
RUN = "tests/gpu/kernelbench_run"

# problem file (under level{L}/) -> the kernelbench-format candidate that passes it.
PROBLEMS = [
    ("level1/1_Square_matrix_multiplication_.py", "level_1_problem_1_sample_0_kernel.py"),
    ("level1/5_Matrix_scalar_multiplication.py", "level_1_problem_5_sample_0_kernel.py"),
    ("level1/21_Sigmoid.py", "level_1_problem_21_sample_0_kernel.py"),
    ("level1/23_Softmax.py", "level_1_problem_23_sample_0_kernel.py"),
    ("level1/40_LayerNorm.py", "level_1_problem_40_sample_1_kernel.py"),
    ("level1/47_Sum_reduction_over_a_dimension.py", "level_1_problem_47_sample_2_kernel.py"),
    ("level1/94_MSELoss.py", "level_1_problem_94_sample_0_kernel.py"),
    ("level1/100_HingeLoss.py", "level_1_problem_100_sample_1_kernel.py"),
    ("level2/12_Gemm_Multiply_LeakyReLU.py", "level_2_problem_12_sample_0_kernel.py"),
    ("level2/29_Matmul_Mish_Mish.py", "level_2_problem_29_sample_0_kernel.py"),
    ("level2/56_Matmul_Sigmoid_Sum.py", "level_2_problem_56_sample_1_kernel.py"),
    ("level2/63_Gemm_ReLU_Divide.py", "level_2_problem_63_sample_2_kernel.py"),
    ("level2/76_Gemm_Add_ReLU.py", "level_2_problem_76_sample_0_kernel.py"),
    ("level3/1_MLP.py", "level_3_problem_1_sample_0_kernel.py"),
    ("level3/2_ShallowWideMLP.py", "level_3_problem_2_sample_0_kernel.py"),
    ("level3/3_DeepNarrowMLP.py", "level_3_problem_3_sample_1_kernel.py"),
]
# bench/kernelbench_small.json skips these two (no factor brings their weights under 2^20 elements); ours.
BY_HAND = {
    "level3/1_MLP.py": [["batch_size = 128", "batch_size = 16"], ["input_size = 16384", "input_size = 256"],
                        ["layer_sizes = [16384, 16384]", "layer_sizes = [256, 256]"],
                        ["output_size = 8192", "output_size = 128"]],
    "level3/2_ShallowWideMLP.py": [["batch_size = 128", "batch_size = 16"], ["input_size = 16384", "input_size = 256"],
                                   ["hidden_layer_sizes = [32768, 32768]", "hidden_layer_sizes = [512, 512]"],
                                   ["output_size = 16384", "output_size = 256"]],
}
# Every output store of the two extension families (tests/gpu/README.md), perturbed: x -> x * 1.0625 + 0.0625 is
# outside fp32's atol + rtol * |x| (1e-2 each) for every x.
WRONG = [
    ("C[m * N + n] = ApplyEpilogue<kEpi>(v, alpha, beta);",
     "C[m * N + n] = ApplyEpilogue<kEpi>(v, alpha, beta) * 1.0625f + 0.0625f;"),
    ("yr[c] = expf(xr[c] - row_max) / row_sum;", "yr[c] = expf(xr[c] - row_max) / row_sum * 1.0625f + 0.0625f;"),
    ("y[i] = 1.0f / (1.0f + expf(-x[i]));", "y[i] = 1.0f / (1.0f + expf(-x[i])) * 1.0625f + 0.0625f;"),
    ("c[i] = a[i] * s;", "c[i] = a[i] * s * 1.0625f + 0.0625f;"),
    ("y[idx] = static_cast<float>(acc);", "y[idx] = static_cast<float>(acc) * 1.0625f + 0.0625f;"),
    ("out[0] = static_cast<float>(acc / n);", "out[0] = static_cast<float>(acc / n) * 1.0625f + 0.0625f;"),
    ("y[i] = (x[i] - stats[row * 2]) * stats[row * 2 + 1] * w[j] + b[j];",
     "y[i] = ((x[i] - stats[row * 2]) * stats[row * 2 + 1] * w[j] + b[j]) * 1.0625f + 0.0625f;"),
]
CUDA_ERROR = "\n__global__ void GrpoBrokenKernel(float* y) { y[0] = grpo_undefined_helper(y[0]); }\n"
CPP_ERROR = "\ntorch::Tensor grpo_broken(torch::Tensor x) { return x.grpo_not_a_method(); }\n"
KINDS = ["honest"] * 4 + ["wrong"] * 2 + ["cuda_error", "cpp_error"]
EXPECT = {"honest": "pass", "wrong": "wrong_answer", "cuda_error": "compile_error", "cpp_error": "compile_error"}
# The warm-up: every task's honest candidate, and a few of each failing kind (the full-header fallback of a
# failed slim build, the C++ side), so that every precompiled header exists before the timings.
WARM = [(t, "honest") for t in range(16)] + [(0, "wrong"), (8, "wrong"), (1, "cuda_error"), (9, "cuda_error"),
                                            (2, "cuda_error"), (3, "cpp_error"), (10, "cpp_error")]
RUNS = ["warm", "eval1", "serve1", "eval2", "serve2"]


def section(text, start):
    """(begin, end) of the raw string that follows `start` (its text between the quotes)."""
    i = text.index(start) + len(start)
    return i, text.index('"""', i)


def candidate(base, run, task, sample, kind):
    text = base
    # The header: what this variant expects, and which run/sample it is (a Python comment: no build of its own).
    text = re.sub(r"^# anvil-expect: \S+", f"# anvil-expect: {EXPECT[kind]}", text, count=1)
    text = text.replace("\nimport torch\n", f"\n# grpo run {run} task {task} sample {sample} ({kind})\nimport torch\n", 1)
    b, e = section(text, '_CUDA_SOURCE = r"""')
    cuda = text[b:e]
    if kind == "wrong":
        hits = 0
        for old, new in WRONG:
            hits += cuda.count(old)
            cuda = cuda.replace(old, new)
        assert hits, (task, "no output store found")
    if kind == "cuda_error":
        cuda += CUDA_ERROR
    # The build's token: honest samples build once per run and task; the failing kinds once per run and
    # extension family (their sources are the family's, the same for every task that uses it).
    family = re.search(r'name="([a-z_]+)"', text).group(1)
    cuda = (f"\n// grpo build: run {run}, task {task}, {kind}" if kind == "honest" else
            f"\n// grpo build: run {run}, {family}, {kind}") + cuda
    text = text[:b] + cuda + text[e:]
    if kind == "cpp_error":
        b, e = section(text, '_CPP_SOURCE = r"""')
        text = text[:b] + text[b:e] + CPP_ERROR + text[e:]
    return text


def make(args):
    small = json.loads((ROOT / "bench" / "kernelbench_small.json").read_text())["problems"]
    out = Path(args.out)
    manifest = {"tasks": [], "runs": {}}
    for t, (problem, cand) in enumerate(PROBLEMS):
        text = (Path(args.kernelbench) / problem).read_text()
        for old, new in small[problem]["replace"] if problem in small else BY_HAND[problem]:
            assert old in text, (problem, old)
            text = text.replace(old, new)
        path = out / "tasks" / problem
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        manifest["tasks"].append({"problem": problem, "task": str(path.relative_to(out)), "base": cand})
    for run in RUNS:
        jobs = WARM if run == "warm" else [(t, k) for t in range(16) for k in KINDS]
        rows, seen = [], {}
        for t, kind in jobs:
            sample = seen.get(t, 0)
            seen[t] = sample + 1
            base = (SRC / RUN / PROBLEMS[t][1]).read_text()
            name = f"t{t:02d}_s{sample}_{kind}.py"
            path = out / run / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(candidate(base, run, t, sample, kind))
            rows.append({"task_index": t, "sample": sample, "kind": kind, "expect": EXPECT[kind],
                         "candidate": str(path.relative_to(out))})
        manifest["runs"][run] = rows
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    print(f"wrote {sum(len(r) for r in manifest['runs'].values())} candidates and 16 tasks under {out}")


# --- on the GPU machine ---

def counts(statuses):
    c = {}
    for s in statuses:
        c[s] = c.get(s, 0) + 1
    return ", ".join(f"{k} {v}" for k, v in sorted(c.items()))


class Server:
    def __init__(self, anvil, work, flags, log):
        self.log = open(log, "w")
        cmd = [anvil, "serve", "--backend", "cuda", "--port", "0", "--work-dir", str(work), *flags]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self.proc.stdout.readline()
        if "listening on" not in line:
            raise RuntimeError("anvil serve did not start: " + Path(log).read_text()[-3000:])
        self.url = line.split()[-1]
        self.port = int(self.url.rsplit(":", 1)[1])
        start = time.monotonic()
        while True:  # As a trainer's launcher does: wait for /readyz.
            try:
                status = asyncio.run(http(self.port, "GET", "/readyz"))
            except OSError:
                status = 0
            if status == 200:
                break
            if time.monotonic() - start > 180:
                raise RuntimeError("anvil serve not ready in 180 s")
            time.sleep(0.1)
        self.ready_s = time.monotonic() - start

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()


async def http(port, method, path):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode())
    await writer.drain()
    raw = await reader.read()
    writer.close()
    return int(raw.split(b" ", 2)[1])


def eval_pass(args, d, run, rows, log):
    listing = Path(args.out) / f"{run}.list.jsonl"
    with open(listing, "w") as f:
        for r in rows:
            task = d / args.manifest["tasks"][r["task_index"]]["task"]
            f.write(json.dumps({"task": str(task.resolve()), "candidate": str((d / r["candidate"]).resolve())}) + "\n")
    out = Path(args.out) / f"{run}.verdicts.jsonl"
    out.unlink(missing_ok=True)
    cmd = [args.anvil, "eval", "--backend", "cuda", "--list", str(listing), "-q", "-o", str(out), *args.flags]
    start = time.perf_counter()
    with open(log, "w") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
        try:
            rc = proc.wait(timeout=args.phase_limit)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGTERM)  # anvil answers SIGTERM by ending its children
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            rc = f"cut at {args.phase_limit:.0f} s"
    took = time.perf_counter() - start
    by_path = {}
    for line in out.read_text().splitlines() if out.exists() else []:
        v = json.loads(line)
        by_path[Path(v["candidate"]["path"]).name] = v
    got = []
    for r in rows:
        v = by_path.get(Path(r["candidate"]).name)
        got.append({"status": v["status"] if v else "missing", "seconds": v.get("seconds") if v else None,
                    "reward": v.get("reward") if v else None,
                    "message": ((v or {}).get("error") or (v or {}).get("gates", {}).get("run", {}).get("message")
                                or "")[:160]})
    return took, rc, got


def serve_pass(args, d, run, rows, server):
    sys.path.insert(0, str(SRC / "python"))
    from anvil_client import verl as verl_adapter
    from anvil_client.client import AsyncClient
    codes = {v: k for k, v in verl_adapter.STATUS_CODES.items()}

    async def step():
        client = AsyncClient(server.url)
        # The tasks, registered once (a trainer's ground_truth is then the task's sha256).
        hashes = {}
        for i, t in enumerate(args.manifest["tasks"]):
            hashes[i] = await client.register_task((d / t["task"]).read_text())
        samples = [("Here is my kernel.\n```python\n" + (d / r["candidate"]).read_text() + "```\n",
                    hashes[r["task_index"]]) for r in rows]
        start = time.perf_counter()
        results = await asyncio.gather(*[
            verl_adapter.compute_score("kernelbench", response, gt, {}, anvil_url=server.url, backend="cuda",
                                       candidate_format="kernelbench", timeout_s=args.phase_limit,
                                       max_concurrency=len(samples))
            for response, gt in samples])
        return time.perf_counter() - start, results

    took, results = asyncio.run(asyncio.wait_for(step(), args.phase_limit + 30))
    got = [{"status": codes.get(r["anvil_status_code"], "?"), "score": r["score"], "cached": r["anvil_cached"],
            "infra": r["anvil_infra_error"]} for r in results]
    return took, got


def run(args):
    d = Path(args.dir)
    args.manifest = json.loads((d / "manifest.json").read_text())
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    args.flags = ["-j", str(args.jobs), "--trials", "2", "--timeout", "40", "--iters", "10", "--baselines", "eager"]
    t0 = time.monotonic()
    left = lambda: args.budget - (time.monotonic() - t0)  # noqa: E731
    report = {"jobs": args.jobs, "flags": args.flags, "passes": []}

    def save():
        (out / "grpo_step.json").write_text(json.dumps(report, indent=1))

    # Warm-up: tasks prepared, precompiled headers built.
    args.phase_limit = max(90, min(170, left() - 170))
    took, rc, got = eval_pass(args, d, "warm", args.manifest["runs"]["warm"], out / "warm.log")
    report["warm"] = {"seconds": took, "rc": rc, "statuses": counts(g["status"] for g in got)}
    print(f"[grpo] warm-up eval: {took:.1f} s, exit {rc}, {report['warm']['statuses']}", flush=True)
    save()
    server = None
    try:
        for pair in (1, 2):
            if pair == 2 and left() < 2.2 * max(p["seconds"] for p in report["passes"]) + 20:
                print(f"[grpo] no time for a second pair ({left():.0f} s left)", flush=True)
                break
            args.phase_limit = max(60, left() / 2 - 15)
            rows = args.manifest["runs"][f"eval{pair}"]
            took, rc, got = eval_pass(args, d, f"eval{pair}", rows, out / f"eval{pair}.log")
            report["passes"].append({"how": "anvil eval --list", "pair": pair, "seconds": took, "rc": rc,
                                     "verdicts": got, "statuses": counts(g["status"] for g in got)})
            print(f"[grpo] eval{pair}: {took:.1f} s, exit {rc}, {report['passes'][-1]['statuses']}", flush=True)
            save()
            if server is None:
                server = Server(args.anvil, out / "serve-work", args.flags, out / "serve.log")
                report["serve_ready_s"] = server.ready_s
                print(f"[grpo] serve ready after {server.ready_s:.1f} s", flush=True)
            args.phase_limit = max(60, left() - 15)
            rows = args.manifest["runs"][f"serve{pair}"]
            took, got = serve_pass(args, d, f"serve{pair}", rows, server)
            report["passes"].append({"how": "anvil serve + verl compute_score", "pair": pair, "seconds": took,
                                     "verdicts": got, "statuses": counts(g["status"] for g in got),
                                     "step": "first step" if pair == 1 else "next step"})
            print(f"[grpo] serve{pair}: {took:.1f} s, {report['passes'][-1]['statuses']}", flush=True)
            save()
    finally:
        if server is not None:
            server.stop()
        save()
    write_md(args, report, out / "grpo_step.md")


def write_md(args, report, path):
    m = args.manifest
    lines = ["| how | pair | wall s | statuses |", "|---|---|---|---|"]
    lines += [f"| {p['how']} | {p['pair']} | {p['seconds']:.1f} | {p['statuses']} |" for p in report["passes"]]
    pairs = {}
    for p in report["passes"]:
        pairs.setdefault(p["pair"], {})[p["how"].split()[1]] = p
    for n, pr in sorted(pairs.items()):
        if "eval" in pr and "serve" in pr:
            lines.append(f"\nPair {n}: serve {pr['serve']['seconds']:.1f} s / eval {pr['eval']['seconds']:.1f} s = "
                         f"{pr['serve']['seconds'] / pr['eval']['seconds']:.3f}")
    lines += ["", "| task | sample | kind | expected | " + " | ".join(
        f"{p['how'].split()[1]}{p['pair']}" for p in report["passes"]) + " |",
              "|---|---|---|---|" + "---|" * len(report["passes"])]
    disagree = 0
    rows = m["runs"]["eval1"]
    for i, r in enumerate(rows):
        cells = [p["verdicts"][i]["status"] if i < len(p["verdicts"]) else "-" for p in report["passes"]]
        if len(set(cells)) > 1:
            disagree += 1
        lines.append(f"| {m['tasks'][r['task_index']]['problem']} | {r['sample']} | {r['kind']} | {r['expect']} | "
                     + " | ".join(cells) + " |")
    lines.insert(0, f"Candidates whose statuses differ between passes: {disagree} of {len(rows)}\n")
    path.write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:12]))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    mk = sub.add_parser("make")
    mk.add_argument("--kernelbench", default=str(ROOT.parent / "shared" / "kernelbench"))
    mk.add_argument("--out", default=str(ROOT / ".kb" / "grpo"))
    rn = sub.add_parser("run")
    rn.add_argument("--anvil", required=True)
    rn.add_argument("--dir", default=str(ROOT / ".kb" / "grpo"))
    rn.add_argument("--jobs", type=int, default=4)
    rn.add_argument("--out", default=os.environ.get("OUT", "bench-out"))
    rn.add_argument("--budget", type=float, default=540, help="seconds for the whole run")
    args = ap.parse_args()
    make(args) if args.cmd == "make" else run(args)


if __name__ == "__main__":
    main()
