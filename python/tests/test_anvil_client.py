"""anvil_client against the real `anvil serve` (cpu backend) and against a scripted server for what the real one
only does under load: 429 and 503 retried as Retry-After says, a dropped connection tried again, a refusal (4xx)
never retried."""

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from anvil_client import AsyncClient, ServiceError, STATUS_CODES

ROOT = Path(__file__).resolve().parents[2]
RELU = (ROOT / "examples" / "tasks" / "relu.py").read_text()
CANDIDATES = ROOT / "examples" / "candidates" / "relu"


def native(name):
    return (CANDIDATES / name).read_text()


def test_verdicts_jobs_and_refusals_from_the_real_service(service):
    async def go():
        client = AsyncClient(service, max_concurrency=4)
        assert await client.health() == {"status": "ok"}
        v = await client.evaluate(native("pass_native.cpp"), "native", task_source=RELU)
        assert v["status"] == "pass" and STATUS_CODES[v["status"]] == 0
        # A deadline shorter than the verdict: awaited as a job, not asked again.
        v = await client.evaluate(native("timeout_native.cpp"), "native", task_source=RELU, deadline_s=0.5)
        assert v["status"] == "timeout"
        task_hash = await client.register_task(RELU)
        ids = await client.submit([{"candidate_source": native(n), "candidate_format": "native", "task_hash": task_hash}
                                   for n in ("wrong_answer_native.cpp", "compile_error_native.cpp")],
                                  idempotency_key="step-1")
        assert ids == await client.submit([{"candidate_source": "x", "candidate_format": "native",
                                            "task_hash": task_hash}], idempotency_key="step-1")
        assert [v["status"] for v in await client.wait_jobs(ids)] == ["wrong_answer", "compile_error"]
        with pytest.raises(ServiceError) as refused:
            await client.evaluate("x", "native", task_source=RELU, trials=0)
        assert refused.value.status == 400 and refused.value.field == "trials"
        # Many at once, fewer in flight than asked: all answered.
        verdicts = await asyncio.gather(*[client.evaluate(native("pass_native.cpp"), "native", task_hash=task_hash,
                                                          trials=1 + i % 3) for i in range(8)])
        assert [v["status"] for v in verdicts] == ["pass"] * 8
    asyncio.run(go())


class Scripted(BaseHTTPRequestHandler):
    """Answers from a list: (status, headers, body) or "drop" (the connection closed with no answer)."""
    script, seen = [], []

    def log_message(self, *args):
        pass

    def _answer(self):
        length = int(self.headers.get("Content-Length", 0))
        body = self.rfile.read(length) if length else b""
        Scripted.seen.append((self.command, self.path, body))
        step = Scripted.script.pop(0)
        if step == "drop":
            self.close_connection = True
            self.connection.shutdown(2)
            return
        status, headers, payload = step
        data = json.dumps(payload).encode()
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_DELETE = _answer


@pytest.fixture
def scripted():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Scripted)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    Scripted.seen.clear()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_busy_answers_and_dropped_connections_are_retried(scripted):
    verdict = {"status": "pass", "reward": 1.0}
    Scripted.script[:] = [(429, {"Retry-After": "0"}, {"error": {"field": "", "message": "full"}}), "drop",
                          (503, {"Retry-After": "0"}, {"error": {"field": "", "message": "stopping"}}),
                          (200, {}, {"job_id": "j_1", "verdict": verdict})]
    client = AsyncClient(scripted, retries=5, backoff_s=0.01, token="t" * 20)
    assert asyncio.run(client.evaluate("code", "native", task_hash="a" * 64)) == verdict
    assert len(Scripted.seen) == 4
    assert json.loads(Scripted.seen[-1][2])["task_hash"] == "a" * 64


def test_a_deadline_503_is_awaited_as_its_job(scripted):
    verdict = {"status": "timeout", "reward": -1.0}
    Scripted.script[:] = [(503, {"Retry-After": "5"}, {"error": {"field": "deadline_s", "message": "late"},
                                                       "job_id": "j_9"}),
                          (200, {}, {"job_id": "j_9", "state": "running"}),
                          (200, {}, {"job_id": "j_9", "state": "done", "verdict": verdict})]
    client = AsyncClient(scripted)
    assert asyncio.run(client.evaluate("code", "native", task_hash="a" * 64, deadline_s=1)) == verdict
    assert [s[:2] for s in Scripted.seen[1:]] == [("GET", "/v1/jobs/j_9?wait=60")] * 2


def test_refusals_are_not_retried_and_retries_end(scripted):
    Scripted.script[:] = [(422, {}, {"error": {"field": "backend", "message": "this service judges on cpu"}})]
    client = AsyncClient(scripted, retries=3, backoff_s=0.01)
    with pytest.raises(ServiceError) as e:
        asyncio.run(client.evaluate("code", "native", backend="cuda", task_hash="a" * 64))
    assert e.value.status == 422 and e.value.field == "backend" and len(Scripted.seen) == 1
    Scripted.script[:] = [(429, {"Retry-After": "0"}, {"error": {"field": "", "message": "full"}})] * 3
    Scripted.seen.clear()
    with pytest.raises(ServiceError) as e:
        asyncio.run(AsyncClient(scripted, retries=2, backoff_s=0.01).health())
    assert e.value.status == 429 and len(Scripted.seen) == 3  # One try and two retries.
    with pytest.raises(ValueError):
        AsyncClient("ftp://x")
    with pytest.raises(ValueError):
        asyncio.run(client.evaluate("code", "native"))  # Neither task_source nor task_hash.
