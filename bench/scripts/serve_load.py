"""The reward service's targets on the CPU machine (issue 34, step 7), against a real `anvil serve`:

  hits      200 req/s of verdict-cache hits from an open-loop load generator pinned to core 0, the server pinned to
            core 1, no compile running: p50 <= 5 ms, p99 <= 20 ms from the client and from the server's histogram.
  overhead  for real verdicts (cache off): client latency - verdict.seconds <= 5 ms p50.
  jobs      1,000 jobs (native candidates) posted in batches and awaited by long-poll, without error.
  slowloris 64 connections trickling their requests: /healthz latency meanwhile (<= 50 ms), each one cut off (408).

    python3 bench/scripts/serve_load.py [--only hits,overhead,jobs,slowloris] [--rate 200] [--seconds 30]
        [--out bench/results/serve_cpu.md]

Each part starts its own server (build/anvil; $ANVIL_BIN) with a fresh job store; the cache folder is the default
one (~/.cache/anvil), so torch is probed once. Latencies are from the scheduled send time (open loop: a slow answer
does not delay the next request).
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", default="hits,overhead,jobs,slowloris")
    ap.add_argument("--rate", type=float, default=200)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--verdicts", type=int, default=50)
    ap.add_argument("--jobs", type=int, default=1000)
    ap.add_argument("--out")
    args = ap.parse_args()
    lines = ["# anvil serve on the CPU machine", "",
             f"Command: `python3 bench/scripts/serve_load.py --only {args.only} --rate {args.rate:g} --seconds "
             f"{args.seconds:g}`; {os.cpu_count()} cores; {subprocess.run([ANVIL, '--version'], capture_output=True, text=True).stdout.strip()}.", ""]
    for part in args.only.split(","):
        print(f"[serve_load] {part}", file=sys.stderr, flush=True)
        globals()["part_" + part](args, lines)
    text = "\n".join(lines) + "\n"
    if args.out:
        Path(args.out).write_text(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
