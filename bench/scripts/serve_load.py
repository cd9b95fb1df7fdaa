"""The reward service's targets on the CPU machine (issue 34, step 7), against a real `anvil serve`:

  hits      200 req/s of verdict-cache hits from an open-loop load generator pinned to core 0, the server pinned to
            core 1, no compile running: p50 <= 5 ms, p99 <= 20 ms from the client and from the server's histogram.
  overhead  for real verdicts (cache off): client latency - verdict.seconds <= 5 ms p50.
  jobs      1,000 jobs (native candidates) posted in batches and awaited by long-poll, without error.
  slowloris 64 connections trickling their requests: /healthz latency meanwhile (<= 50 ms), each one cut off (408).
  grpo      a simulated GRPO step: 8 samples for each of 8 tasks posted at once through the verl adapter
            (anvil_client/verl.py's compute_score), cache off, against `anvil eval --list` with the same -j on the
            same candidates: wall time <= 1.1x, two runs each, alternating.

    python3 bench/scripts/serve_load.py [--only hits,overhead,jobs,slowloris,grpo] [--rate 200] [--seconds 30]
        [--out bench/results/serve_cpu.md]

Each part starts its own server (build/anvil; $ANVIL_BIN) with a fresh job store and waits for /readyz; the cache
folder is the default one (~/.cache/anvil), so torch is probed once. Latencies are from the scheduled send time
(open loop: a slow answer does not delay the next request).
"""

import argparse
import asyncio
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ANVIL = os.environ.get("ANVIL_BIN", str(ROOT / "build" / "anvil"))
RELU = (ROOT / "examples" / "tasks" / "relu.py").read_text()
PASS = (ROOT / "examples" / "candidates" / "relu" / "pass_native.cpp").read_text()


def pct(values, p):
    values = sorted(values)
    if not values:
        return float("nan")
    k = (len(values) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


class Server:
    def __init__(self, tmp, *args, cpu=None):
        self.err = open(Path(tmp) / "serve.err", "w")
        cmd = [ANVIL, "serve", "--port", "0", "--work-dir", str(Path(tmp) / "work"), "-q", *args]
        if cpu is not None:
            cmd = ["taskset", "-c", str(cpu), *cmd]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self.err, text=True)
        line = self.proc.stdout.readline()
        if "listening on" not in line:
            raise SystemExit("anvil serve did not start: " + (Path(tmp) / "serve.err").read_text())
        self.url = line.split()[-1]
        self.port = int(self.url.rsplit(":", 1)[1])
        # As a trainer's launcher does: wait for /readyz (the Python workers up).
        deadline = time.monotonic() + 120
        while asyncio.run(http(self.port, "GET", "/readyz"))[0] != 200:
            if time.monotonic() > deadline:
                raise SystemExit("anvil serve not ready in 120 s")
            time.sleep(0.05)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=120)


async def http(port, method, path, body=None):
    """(status, body text, seconds) over a fresh connection, as anvil_client does."""
    start = time.perf_counter()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    data = json.dumps(body).encode() if body is not None else b""
    head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\nContent-Length: {len(data)}\r\n"
    if body is not None:
        head += "Content-Type: application/json\r\n"
    writer.write(head.encode() + b"\r\n" + data)
    await writer.drain()
    raw = await reader.read()
    writer.close()
    status = int(raw.split(b" ", 2)[1])
    return status, raw.split(b"\r\n\r\n", 1)[1].decode(), time.perf_counter() - start


def server_quantiles(metrics_text, route, qs=(0.5, 0.99)):
    """Quantiles from the server's histogram (upper bucket bounds, as Prometheus' histogram_quantile)."""
    buckets = []
    for m in re.finditer(r'anvil_http_request_seconds_bucket\{route="%s",le="([^"]+)"\} (\d+)' % re.escape(route),
                         metrics_text):
        buckets.append((float("inf") if m.group(1) == "+Inf" else float(m.group(1)), int(m.group(2))))
    total = buckets[-1][1] if buckets else 0
    out = []
    for q in qs:
        want = q * total
        out.append(next((b for b, n in buckets if n >= want), float("nan")))
    return out, total


def evaluate_body(candidate=PASS):
    return {"task_source": RELU, "candidate_source": candidate, "candidate_format": "native", "backend": "cpu"}


def part_hits(args, lines):
    with tempfile.TemporaryDirectory() as tmp:
        s = Server(tmp, "--timeout", "20", cpu=1)
        try:
            body = evaluate_body(PASS + f"\n// {uuid.uuid4()}\n")
            status, text, seconds = asyncio.run(http(s.port, "POST", "/v1/evaluate", body))
            assert status == 200, text
            first = json.loads(text)["verdict"]
            status, text, _ = asyncio.run(http(s.port, "POST", "/v1/evaluate", body))
            assert json.loads(text)["verdict"].get("cached") is True, text
            # The load generator alone on core 0.
            os.sched_setaffinity(0, {0})
            n = int(args.rate * args.seconds)

            async def load():
                t0 = time.perf_counter() + 0.2
                results = []

                async def one(i):
                    await asyncio.sleep(max(0.0, t0 + i / args.rate - time.perf_counter()))
                    scheduled = t0 + i / args.rate
                    status, text, _ = await http(s.port, "POST", "/v1/evaluate", body)
                    results.append((status, time.perf_counter() - scheduled, '"cached":true' in text))

                await asyncio.gather(*[one(i) for i in range(n)])
                return results

            results = asyncio.run(load())
            os.sched_setaffinity(0, set(range(os.cpu_count())))
            latencies = [r[1] * 1000 for r in results]
            ok = sum(1 for r in results if r[0] == 200 and r[2])
            _, metrics, _ = asyncio.run(http(s.port, "GET", "/metrics"))
            (sp50, sp99), count = server_quantiles(metrics, "/v1/evaluate")
            lines += ["## Cache hits, open loop", "",
                      f"{n} requests at {args.rate:g} req/s for {args.seconds:g} s, one connection each; server on "
                      f"core 1, generator on core 0. First verdict (a real one): {first['status']} in "
                      f"{seconds * 1000:.0f} ms.", "",
                      "| | p50 ms | p99 ms | max ms |", "|---|---|---|---|",
                      f"| client | {pct(latencies, 50):.2f} | {pct(latencies, 99):.2f} | {max(latencies):.2f} |",
                      f"| server histogram (bucket bounds) | <= {sp50 * 1000:g} | <= {sp99 * 1000:g} | |", "",
                      f"{ok} of {n} answered 200 with `cached: true`; the histogram counted {count} requests.", ""]
        finally:
            s.stop()


def part_overhead(args, lines):
    with tempfile.TemporaryDirectory() as tmp:
        s = Server(tmp, "--no-verdict-cache", "--timeout", "20", cpu=1)
        try:
            overheads, seconds = [], []
            for i in range(args.verdicts + 1):
                status, text, took = asyncio.run(http(s.port, "POST", "/v1/evaluate", evaluate_body()))
                assert status == 200, text
                if i == 0:
                    continue  # The first builds the candidate and prepares the task.
                v = json.loads(text)["verdict"]
                overheads.append((took - v["seconds"]) * 1000)
                seconds.append(v["seconds"])
            lines += ["## Service overhead on real verdicts", "",
                      f"{args.verdicts} verdicts one after another (relu, pass_native.cpp, cache off; the first, "
                      f"which builds and prepares, left out): verdict.seconds median {statistics.median(seconds):.3f} "
                      "s.", "", "| | p50 ms | p90 ms | max ms |", "|---|---|---|---|",
                      f"| client latency - verdict.seconds | {pct(overheads, 50):.2f} | {pct(overheads, 90):.2f} | "
                      f"{max(overheads):.2f} |", ""]
        finally:
            s.stop()


def part_jobs(args, lines):
    with tempfile.TemporaryDirectory() as tmp:
        s = Server(tmp, "--no-verdict-cache", "--timeout", "20", "-j", "2")
        try:
            start = time.perf_counter()
            ids, errors = [], 0
            for b in range(args.jobs // 100):
                batch = {"jobs": [evaluate_body() for _ in range(100)], "idempotency_key": f"batch-{b}"}
                status, text, _ = asyncio.run(http(s.port, "POST", "/v1/jobs", batch))
                if status != 202:
                    errors += 1
                    continue
                ids += json.loads(text)["job_ids"]
            posted = time.perf_counter() - start
            done, polls = {}, 0
            while len(done) < len(ids):
                pending = [i for i in ids if i not in done][:1024]
                status, text, _ = asyncio.run(http(s.port, "GET", "/v1/jobs?ids=" + ",".join(pending) + "&wait=60"))
                polls += 1
                if status != 200:
                    errors += 1
                    if errors > 10:
                        raise SystemExit(f"GET /v1/jobs keeps failing: {status} {text[:300]}")
                    continue
                for j in json.loads(text)["jobs"]:
                    if j["state"] in ("done", "cancelled"):
                        done[j["job_id"]] = j.get("verdict", {}).get("status", j["state"])
            took = time.perf_counter() - start
            statuses = {}
            for st in done.values():
                statuses[st] = statuses.get(st, 0) + 1
            lines += ["## 1,000 jobs by long-poll", "",
                      f"{len(ids)} jobs (relu, pass_native.cpp, cache off, -j 2) posted in {args.jobs // 100} batches "
                      f"of 100 in {posted:.2f} s, awaited by {polls} long-polls: all verdicts in {took:.1f} s "
                      f"({len(ids) / took:.1f} verdicts/s); statuses {statuses}; HTTP errors {errors}.", ""]
        finally:
            s.stop()


def part_slowloris(args, lines):
    with tempfile.TemporaryDirectory() as tmp:
        s = Server(tmp, "--request-timeout", "10")
        slow = []
        try:
            for _ in range(64):
                c = socket.create_connection(("127.0.0.1", s.port))
                c.sendall(b"POST /v1/evaluate HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                slow.append(c)
            latencies = []
            start = time.monotonic()
            while time.monotonic() - start < 8:
                for c in slow:
                    c.sendall(b"X")
                _, _, took = asyncio.run(http(s.port, "GET", "/healthz"))
                latencies.append(took * 1000)
                time.sleep(0.05)
            cut = 0
            for c in slow:
                c.settimeout(10)
                got = b""
                try:
                    while b"}" not in got:
                        chunk = c.recv(4096)
                        if not chunk:
                            break
                        got += chunk
                except OSError:
                    pass
                cut += b"408" in got
            lines += ["## Slow clients", "",
                      f"64 connections trickling a header byte each per round for 8 s (--request-timeout 10): "
                      f"{len(latencies)} /healthz calls meanwhile, p50 {pct(latencies, 50):.2f} ms, p99 "
                      f"{pct(latencies, 99):.2f} ms, max {max(latencies):.2f} ms; {cut} of 64 cut off with 408.", ""]
        finally:
            for c in slow:
                c.close()
            s.stop()


GRPO_TASKS = {  # name: (example task, its candidates' folder, {text: replacement} making a distinct task)
    "relu": ("relu", {}), "relu_b32": ("relu", {"batch_size = 16": "batch_size = 32"}),
    "matmul": ("matmul", {}), "matmul_m128": ("matmul", {"M = 64": "M = 128"}),
    "small_mlp": ("small_mlp", {}), "small_mlp_b32": ("small_mlp", {"batch_size = 16": "batch_size = 32"}),
    "sum_reduction": ("sum_reduction", {}), "sum_reduction_b32": ("sum_reduction", {"batch_size = 16": "batch_size = 32"}),
}


def grpo_group(tmp, run):
    """8 tasks x 8 samples: each sample one of its task's native candidates (no timeout ones: they only wait), made
    distinct by a comment naming the run and sample, as a model's samples are; written out for `anvil eval --list`."""
    folder = Path(tmp) / f"grpo-{run}"
    folder.mkdir()
    samples, listing = [], []
    for name, (base, edits) in GRPO_TASKS.items():
        text = (ROOT / "examples" / "tasks" / f"{base}.py").read_text()
        for old, new in edits.items():
            assert old in text, (base, old)
            text = text.replace(old, new)
        task = folder / f"{name}.py"
        task.write_text(text)
        candidates = sorted(p for p in (ROOT / "examples" / "candidates" / base).glob("*_native.cpp")
                            if not p.name.startswith("timeout"))
        for i in range(8):
            code = candidates[i % len(candidates)].read_text() + f"\n// grpo run {run} sample {i}\n"
            path = folder / f"{name}-{i}.cpp"
            path.write_text(code)
            listing.append(json.dumps({"task": str(task), "candidate": str(path)}))
            samples.append((text, "Here is my kernel.\n```cpp\n" + code + "```\n"))
    (folder / "list.jsonl").write_text("\n".join(listing) + "\n")
    return samples, folder / "list.jsonl"


def part_grpo(args, lines):
    sys.path.insert(0, str(ROOT / "python"))
    from anvil_client import verl as verl_adapter
    options = ["--timeout", "20", "-j", str(args.grpo_jobs)]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        # Warm up what both sides share: torch probed, every task's trials and baselines prepared.
        samples, listing = grpo_group(tmp, "warm")
        subprocess.run([ANVIL, "eval", "--list", str(listing), "-b", "cpu", "-q", "--json", *options],
                       stdout=subprocess.DEVNULL, check=False)
        for run in range(1, 3):
            samples, listing = grpo_group(tmp, f"eval{run}")
            start = time.perf_counter()
            proc = subprocess.run([ANVIL, "eval", "--list", str(listing), "-b", "cpu", "-q", "--json", *options],
                                  capture_output=True, text=True)
            took = time.perf_counter() - start
            verdicts = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
            rows.append(("anvil eval --list", run, took, statuses_of(v["status"] for v in verdicts)))

            (Path(tmp) / f"serve{run}").mkdir()
            s = Server(Path(tmp) / f"serve{run}", "--no-verdict-cache", *options)
            codes = {v: k for k, v in verl_adapter.STATUS_CODES.items()}
            try:
                # A fresh server's first step, then its second: a trainer's service has served earlier steps.
                for step_name in ("first step", "next step"):
                    samples, _ = grpo_group(tmp, f"serve{run}-{step_name.split()[0]}")

                    async def step():
                        return await asyncio.gather(*[
                            verl_adapter.compute_score("kernelbench", response, task, {}, anvil_url=s.url,
                                                       backend="cpu", candidate_format="native", timeout_s=600)
                            for task, response in samples])

                    start = time.perf_counter()
                    results = asyncio.run(step())
                    took = time.perf_counter() - start
                    rows.append((f"anvil serve + verl compute_score, {step_name}", run, took,
                                 statuses_of(codes.get(r["anvil_status_code"], "?") for r in results)))
            finally:
                s.stop()
    eval_mean = statistics.mean(r[2] for r in rows if r[0].startswith("anvil eval"))
    first_mean = statistics.mean(r[2] for r in rows if r[0].endswith("first step"))
    serve_mean = statistics.mean(r[2] for r in rows if r[0].endswith("next step"))
    lines += ["## A simulated GRPO step", "",
              f"8 samples for each of 8 tasks (relu, matmul, small_mlp, sum_reduction and a second size of each; the "
              f"samples cycle through each task's native candidates, a comment making each distinct), cpu backend, "
              f"`{' '.join(options)}`, cache off; a warm-up eval first prepares the tasks for both. Alternating:",
              "", "| how | run | wall s | statuses |", "|---|---|---|---|"]
    lines += [f"| {how} | {run} | {took:.1f} | {st} |" for how, run, took, st in rows]
    lines += ["", f"Mean wall: serve's next step {serve_mean:.1f} s / eval {eval_mean:.1f} s = {serve_mean / eval_mean:.3f}; "
              f"serve's first step {first_mean:.1f} s / eval = {first_mean / eval_mean:.3f}.", ""]


def statuses_of(statuses):
    counts = {}
    for st in statuses:
        counts[st] = counts.get(st, 0) + 1
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", default="hits,overhead,jobs,slowloris,grpo")
    ap.add_argument("--rate", type=float, default=200)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--verdicts", type=int, default=50)
    ap.add_argument("--jobs", type=int, default=1000)
    ap.add_argument("--grpo-jobs", type=int, default=2, help="-j of both sides of the GRPO step")
    ap.add_argument("--out")
    args = ap.parse_args()
    lines = ["# anvil serve on the CPU machine", "",
             f"Command: `python3 bench/scripts/serve_load.py --only {args.only} --rate {args.rate:g} --seconds "
             f"{args.seconds:g}` (.venv/bin/python); {os.cpu_count()} cores; {subprocess.run([ANVIL, '--version'], capture_output=True, text=True).stdout.strip()}.", ""]
    for part in args.only.split(","):
        print(f"[serve_load] {part}", file=sys.stderr, flush=True)
        globals()["part_" + part](args, lines)
    text = "\n".join(lines) + "\n"
    if args.out:
        Path(args.out).write_text(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
