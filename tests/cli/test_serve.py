"""`anvil serve`, the reward service (issue 34): the real server on the cpu backend, driven over HTTP as a trainer
drives it. Verdicts of real candidates, what a malformed request gets, /healthz while judging, /metrics, the caps
(429), the deadline (503), SIGTERM answering what is in flight before the server exits; jobs posted in batches and
awaited by long-poll, idempotency keys, cancel, and a kill -9 after which every accepted job still gets exactly one
verdict."""

import concurrent.futures
import hashlib
import json
import os
import signal
import subprocess
import time
import urllib.error
import uuid
import urllib.request
from pathlib import Path

import pytest

from conftest import EXAMPLES, ROOT, anvil_bin, cache_dir, load_schema, validate

RELU = (EXAMPLES / "tasks" / "relu.py").read_text()
OPENAPI = json.loads((ROOT / "docs" / "openapi.json").read_text())


def openapi_schema(name):
    import jsonschema
    return jsonschema.Draft202012Validator({**OPENAPI["components"]["schemas"][name],
                                            "$defs": OPENAPI["components"]["schemas"]})
CANDIDATES = EXAMPLES / "candidates" / "relu"


def openapi_response(path, code):
    """A validator of a GET's answer with `code`, as docs/openapi.json describes it."""
    import jsonschema
    schema = OPENAPI["paths"][path]["get"]["responses"][code]["content"]["application/json"]["schema"]
    return jsonschema.Draft202012Validator({**schema, "$defs": OPENAPI["components"]["schemas"]})


def job_body(candidate_file=None, **fields):
    body = {"task_source": RELU, "backend": "cpu"}
    if candidate_file is not None:
        path = CANDIDATES / candidate_file
        body["candidate_source"] = path.read_text()
        body["candidate_format"] = "kernelbench" if path.suffix == ".py" else "native"
    body.update(fields)
    return body


class Service:
    """`anvil serve --port 0` on the cpu backend, stopped by stop() (SIGTERM, then a kill if it hangs)."""

    def __init__(self, tmp_path, *args, timeout=5, log="serve.err", cache=False):
        """`cache`: answer repeats from the verdict cache (off by default: the tests' cache is shared, and a verdict
        one test made must not answer another's)."""
        self.stderr_path = tmp_path / log
        self.proc = subprocess.Popen(
            [anvil_bin(), "serve", "--port", "0", "--cache-dir", cache_dir(), "--work-dir", str(tmp_path / "work"),
             "--timeout", str(timeout), *([] if cache else ["--no-verdict-cache"]), *args],
            stdout=subprocess.PIPE, stderr=open(self.stderr_path, "w"), text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("anvil serve: listening on http://"):
            self.proc.kill()  # Never leave a server behind.
            self.proc.wait(timeout=10)
            raise AssertionError((line, self.stderr()))
        self.url = line.split()[-1].replace("0.0.0.0", "127.0.0.1")

    def stderr(self):
        return self.stderr_path.read_text() if self.stderr_path.exists() else ""

    def request(self, method, path, body=None, headers=None, timeout=300):
        """(status, headers, parsed JSON body or text)."""
        data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
        h = {"Content-Type": "application/json"} if data is not None else {}
        h.update(headers or {})
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=h)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                status, hdrs, text = r.status, dict(r.headers), r.read().decode()
        except urllib.error.HTTPError as e:
            status, hdrs, text = e.code, dict(e.headers), e.read().decode()
        try:
            return status, hdrs, json.loads(text)
        except json.JSONDecodeError:
            return status, hdrs, text

    def evaluate(self, candidate_file=None, **fields):
        return self.request("POST", "/v1/evaluate", job_body(candidate_file, **fields))

    def wait_ready(self, seconds=120):
        """Polls /readyz until 200 (the Python workers are up); every answer before it is 503 "starting"."""
        deadline = time.monotonic() + seconds
        answers = []
        while time.monotonic() < deadline:
            status, _, body = self.request("GET", "/readyz")
            answers.append((status, body))
            if status == 200:
                return answers
            assert status == 503 and body["ready"] is False and "Python workers" in body["starting"], body
            time.sleep(0.05)
        raise AssertionError(f"not ready in {seconds} s: {answers[-1]}")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        return self.proc.returncode


@pytest.fixture
def service(tmp_path):
    s = Service(tmp_path)
    yield s
    assert s.stop() == 0, s.stderr()


def test_verdicts_of_real_candidates(service):
    """Each example candidate's verdict over HTTP is the status its header expects, valid against the schema,
    with the task and candidate named by their sha256."""
    schema = load_schema()
    statuses = {}
    for name in ["pass_native.cpp", "pass_kb.py", "compile_error_native.cpp", "runtime_error_native.cpp",
                 "wrong_answer_native.cpp", "cheat_kb.py", "timeout_native.cpp"]:
        status, _, body = service.evaluate(name)
        assert status == 200, (name, body)
        v = body["verdict"]
        validate(v, schema)
        assert body["job_id"].startswith("j_")
        statuses[name] = v["status"]
        assert v["task"]["path"] == "sha256:" + hashlib.sha256(RELU.encode()).hexdigest()
        source = (CANDIDATES / name).read_text()
        assert v["candidate"]["path"] == "sha256:" + hashlib.sha256(source.encode()).hexdigest()
        assert v["policy"] == {"name": "musacoder", "version": 1, "overrides": {}}
    assert statuses == {"pass_native.cpp": "pass", "pass_kb.py": "pass", "compile_error_native.cpp": "compile_error",
                        "runtime_error_native.cpp": "runtime_error", "wrong_answer_native.cpp": "wrong_answer",
                        "cheat_kb.py": "cheat", "timeout_native.cpp": "timeout"}

    # The task is kept: its hash alone poses it again. Per-request policy, trials and reward apply.
    task_hash = hashlib.sha256(RELU.encode()).hexdigest()
    status, _, body = service.request("POST", "/v1/evaluate", {
        "task_hash": task_hash, "candidate_source": (CANDIDATES / "pass_native.cpp").read_text(),
        "candidate_format": "native", "backend": "cpu", "policy": "kernelbench", "trials": 2,
        "reward": {"lambda": 0, "nu_max": 1, "vs": "compile"}})
    assert status == 200, body
    v = body["verdict"]
    validate(v, schema)
    assert v["status"] == "pass" and v["policy"]["name"] == "kernelbench"
    assert v["gates"]["correct"]["trials"] == 2
    assert v["reward"] == 1.0  # lambda 0: no speedup bonus.

    # Every verdict is counted by status in /metrics.
    status, hdrs, text = service.request("GET", "/metrics")
    assert status == 200 and hdrs["Content-Type"].startswith("text/plain")
    assert 'anvil_verdicts_total{status="pass"} 3' in text
    assert 'anvil_verdicts_total{status="timeout"} 1' in text
    assert 'anvil_http_requests_total{route="/v1/evaluate",code="200"} 8' in text, [
        line for line in text.splitlines() if "http_requests_total" in line]
    assert 'anvil_stage_seconds_count{stage="verdict"} 8' in text
    assert 'anvil_jobs{state="queued"} 0' in text


def test_malformed_requests_name_the_field(service):
    native = (CANDIDATES / "pass_native.cpp").read_text()
    good = {"task_source": RELU, "candidate_source": native, "candidate_format": "native", "backend": "cpu"}
    cases = [
        (b"{not json", 400, ""),
        ([1, 2], 400, ""),
        ({k: v for k, v in good.items() if k != "candidate_source"}, 400, "candidate_source"),
        ({**good, "candidate_format": "triton"}, 400, "candidate_format"),
        ({**good, "backend": "tpu"}, 400, "backend"),
        ({**good, "task_hash": "0" * 64}, 400, "task_hash"),
        ({k: v for k, v in good.items() if k != "task_source"}, 400, "task_source"),
        ({**good, "trials": 0}, 400, "trials"),
        ({**good, "trials": 101}, 400, "trials"),
        ({**good, "trials": 2.5}, 400, "trials"),
        ({**good, "deadline_s": 3601}, 400, "deadline_s"),
        ({**good, "deadline_s": -1}, 400, "deadline_s"),
        ({**good, "policy": "lenient"}, 400, "policy"),
        ({**good, "reward": {"lambda": "big"}}, 400, "reward.lambda"),
        ({**good, "reward": {"vs": "cudnn"}}, 400, "reward.vs"),
        ({**good, "sidecar": [1]}, 400, "sidecar"),
        ({**good, "sidecar": {"level": "one"}}, 400, "sidecar"),
        ({**good, "candidate": native}, 400, "candidate"),  # A misspelt field is not ignored.
        ({**good, "candidate_source": 7}, 400, "candidate_source"),
        ({**good, "backend": "cuda"}, 422, "backend"),  # This server judges on cpu.
        ({**{k: v for k, v in good.items() if k != "task_source"}, "task_hash": "ab" * 32}, 404, "task_hash"),
        ({**good, "candidate_source": "x" * (1 << 20 + 1)}, 413, "candidate_source"),
    ]
    request_schema, error_schema = openapi_schema("EvaluateRequest"), openapi_schema("Error")
    assert request_schema.is_valid(good)
    for body, code, field in cases:
        status, _, answer = service.request("POST", "/v1/evaluate", body)
        assert status == code, (body if isinstance(body, bytes) else str(body)[:200], status, answer)
        assert answer["error"]["field"] == field, answer
        assert answer["error"]["message"], answer
        error_schema.validate(answer)  # docs/openapi.json says what the service does.
        if code in (400, 413) and field not in ("sidecar", "policy") or field == "backend" and code == 400:
            assert not request_schema.is_valid(body), body if isinstance(body, bytes) else str(body)[:200]
    # Not JSON by its content type; a body over 4 MiB; a route that does not exist.
    status, _, answer = service.request("POST", "/v1/evaluate", json.dumps(good).encode(),
                                        headers={"Content-Type": "text/plain"})
    assert status == 415 and "application/json" in answer["error"]["message"]
    status, _, answer = service.request("POST", "/v1/evaluate", b"{" + b" " * (5 << 20) + b"}")
    assert status == 413, answer
    status, _, answer = service.request("GET", "/v1/nothing")
    assert status == 404 and "no route" in answer["error"]["message"]
    # After all of that the service still judges.
    status, _, body = service.evaluate("pass_native.cpp")
    assert status == 200 and body["verdict"]["status"] == "pass"


def test_readyz_waits_for_the_workers_and_requests_meanwhile_are_judged(tmp_path):
    s = Service(tmp_path)
    try:
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            # Sent at once: taken while the workers start (PyTorch's import alone takes longer than this request).
            early = pool.submit(s.evaluate, "pass_native.cpp")
            answers = s.wait_ready()
            assert answers[0][0] == 503, answers[0]
            ready = answers[-1][1]
            assert ready["ready"] is True and "starting" not in ready
            status, _, body = early.result(timeout=120)
            assert status == 200 and body["verdict"]["status"] == "pass"
        for status, body in (answers[0], answers[-1]):
            openapi_response("/readyz", str(status)).validate(body)
    finally:
        assert s.stop() == 0, s.stderr()


def test_healthz_answers_while_judging_and_deadline_is_503(tmp_path):
    s = Service(tmp_path, timeout=20)
    s.wait_ready()
    try:
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            hang = pool.submit(s.evaluate, "timeout_native.cpp")
            time.sleep(1)
            start = time.monotonic()
            status, _, body = s.request("GET", "/healthz")
            assert status == 200 and body == {"status": "ok"}
            assert time.monotonic() - start < 1.0
            status, _, body = s.request("GET", "/readyz")
            assert status == 200 and body["ready"] is True and body["jobs"]["running"] == 1
            # A deadline shorter than the verdict: 503, never a `timeout` verdict, and the job goes on.
            status, hdrs, body = s.evaluate("pass_native.cpp", deadline_s=0.5)
            assert status == 503, body
            assert body["error"]["field"] == "deadline_s" and body["job_id"].startswith("j_")
            assert "Retry-After" in hdrs
            assert hang.result()[2]["verdict"]["status"] == "timeout"
    finally:
        assert s.stop() == 0, s.stderr()
    # The job past its deadline still got its verdict before the server stopped.
    assert s.stderr().count(" pass ") == 1, s.stderr()


def test_caps_answer_429(tmp_path):
    s = Service(tmp_path, "--max-sync", "1", timeout=20)
    try:
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            hang = pool.submit(s.evaluate, "timeout_native.cpp")
            time.sleep(1)
            status, hdrs, body = s.evaluate("pass_native.cpp")
            assert status == 429 and hdrs.get("Retry-After") == "1", body
            assert "--max-sync" in body["error"]["message"]
            assert hang.result()[0] == 200
    finally:
        assert s.stop() == 0, s.stderr()


def test_sigterm_answers_requests_in_flight(tmp_path):
    s = Service(tmp_path)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        pending = pool.submit(s.evaluate, "timeout_native.cpp")
        time.sleep(1)
        s.proc.send_signal(signal.SIGTERM)
        status, _, body = pending.result()
        assert status == 200 and body["verdict"]["status"] == "timeout"
    assert s.proc.wait(timeout=60) == 0
    assert "answering the requests in flight" in s.stderr()
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(s.url + "/healthz", timeout=5)


def token_file(tmp_path, name, text, mode=0o600):
    path = tmp_path / name
    path.write_text(text + "\n")
    path.chmod(mode)
    return str(path)


def test_refuses_to_serve_beyond_loopback_without_tokens(tmp_path):
    client = token_file(tmp_path, "client", "c" * 32)
    for extra, message in [([], "--token-file"), (["--token-file", client], "--admin-token-file")]:
        proc = subprocess.run([anvil_bin(), "serve", "--host", "0.0.0.0", "--port", "0", "--cache-dir", cache_dir(),
                               *extra], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    for text, mode, message in [("c" * 32, 0o644, "chmod 600"), ("short", 0o600, "under 16 characters"),
                                ("two words here, long enough", 0o600, "whitespace")]:
        bad = token_file(tmp_path, "bad", text, mode)
        proc = subprocess.run([anvil_bin(), "serve", "--port", "0", "--cache-dir", cache_dir(), "--token-file", bad],
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2 and message in proc.stderr, proc.stderr
        assert text not in proc.stderr  # A token is never printed.
    same = token_file(tmp_path, "same", "c" * 32)
    proc = subprocess.run([anvil_bin(), "serve", "--port", "0", "--cache-dir", cache_dir(), "--token-file", client,
                           "--admin-token-file", same], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "the same" in proc.stderr


def test_tokens_roles_and_task_registration(tmp_path):
    client, admin = "client-token-" + "c" * 20, "admin-token-" + "a" * 20
    s = Service(tmp_path, "--host", "0.0.0.0", "--token-file", token_file(tmp_path, "client", client),
                "--admin-token-file", token_file(tmp_path, "admin", admin))
    as_client, as_admin = {"Authorization": "Bearer " + client}, {"Authorization": "Bearer " + admin}
    native = (CANDIDATES / "pass_native.cpp").read_text()
    try:
        assert s.request("GET", "/healthz")[0] == 200  # Open, as are /readyz and /metrics.
        status, hdrs, body = s.request("POST", "/v1/evaluate", job_body("pass_native.cpp"))
        assert status == 401 and hdrs.get("WWW-Authenticate") == "Bearer", body
        status, _, body = s.request("POST", "/v1/evaluate", job_body("pass_native.cpp"),
                                    headers={"Authorization": "Bearer " + "x" * 32})
        assert status == 401, body
        assert s.request("GET", "/v1/jobs/j_nothing")[0] == 401
        # Beyond loopback a client sends no task text; it registers nothing either.
        status, _, body = s.request("POST", "/v1/evaluate", job_body("pass_native.cpp"), headers=as_client)
        assert status == 403 and body["error"]["field"] == "task_source", body
        status, _, body = s.request("POST", "/v1/tasks", {"task_source": RELU}, headers=as_client)
        assert status == 403, body
        status, _, body = s.request("POST", "/v1/tasks", {"task_source": RELU}, headers=as_admin)
        assert status == 201 and body["task_hash"] == hashlib.sha256(RELU.encode()).hexdigest(), body
        status, _, body = s.request("POST", "/v1/tasks", {"task_source": RELU, "sidecar": {}}, headers=as_admin)
        assert status == 400 and body["error"]["field"] == "sidecar"
        request = {"task_hash": hashlib.sha256(RELU.encode()).hexdigest(), "candidate_source": native,
                   "candidate_format": "native", "backend": "cpu"}
        status, _, body = s.request("POST", "/v1/evaluate", request, headers=as_client)
        assert status == 200 and body["verdict"]["status"] == "pass", body
        status, _, body = s.request("POST", "/v1/evaluate", job_body("pass_native.cpp"), headers=as_admin)
        assert status == 200 and body["verdict"]["status"] == "pass", body
        status, _, body = s.request("POST", "/v1/jobs", request, headers=as_client)
        assert status == 202
        assert s.request("GET", f"/v1/jobs/{body['job_ids'][0]}?wait=30", headers=as_client)[2]["state"] == "done"
        # The compatibility endpoints take the token in their path (their trainers send no headers).
        sample = {"prompt": "p", "response": "```cpp\n" + native + "```", "label": request["task_hash"]}
        status, _, body = s.request("POST", "/v1/compat/slime/" + client + "?format=native", sample)
        assert status == 200 and body["anvil_status_code"] == 0, body
        assert s.request("POST", "/v1/compat/slime?format=native", sample)[0] == 401
        assert s.request("POST", "/v1/compat/slime/" + "z" * 32 + "?format=native", sample)[0] == 401
    finally:
        assert s.stop() == 0, s.stderr()
    assert client not in s.stderr() and admin not in s.stderr()


def test_browsers_proxies_and_rebound_names_are_refused(service):
    for headers, word in [({"Origin": "http://evil.example"}, "Origin"),
                          ({"X-Forwarded-For": "10.0.0.1"}, "X-Forwarded-For"),
                          ({"Forwarded": "for=10.0.0.1"}, "Forwarded"),
                          ({"Host": "evil.example:" + service.url.rsplit(":", 1)[1]}, "Host")]:
        status, _, body = service.request("POST", "/v1/evaluate", job_body("pass_native.cpp"), headers=headers)
        assert status == 403 and word in body["error"]["message"], (headers, body)
    status, _, body = service.request("POST", "/v1/evaluate", job_body("pass_native.cpp"),
                                      headers={"Host": "localhost:" + service.url.rsplit(":", 1)[1]})
    assert status == 200, body


def test_task_text_is_refused_where_the_sandbox_is_weak(tmp_path):
    old = os.environ.get("ANVIL_SANDBOX")
    os.environ["ANVIL_SANDBOX"] = "-seccomp"
    try:
        s = Service(tmp_path)
    finally:
        if old is None:
            del os.environ["ANVIL_SANDBOX"]
        else:
            os.environ["ANVIL_SANDBOX"] = old
    try:
        assert "task text (task_source) is refused" in s.stderr()
        status, _, body = s.evaluate("pass_native.cpp")
        assert status == 403 and "seccomp" in body["error"]["message"], body
        status, _, body = s.request("POST", "/v1/tasks", {"task_source": RELU})
        assert status == 201
        status, _, body = s.request("POST", "/v1/evaluate", {
            "task_hash": body["task_hash"], "candidate_source": (CANDIDATES / "pass_native.cpp").read_text(),
            "candidate_format": "native", "backend": "cpu"})
        assert status == 200 and body["verdict"]["status"] == "pass", body
    finally:
        assert s.stop() == 0, s.stderr()


def test_port_in_use_is_a_usage_error(service):
    port = service.url.rsplit(":", 1)[1]
    proc = subprocess.run([anvil_bin(), "serve", "--port", port, "--cache-dir", cache_dir()],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert f"cannot listen on 127.0.0.1:{port}" in proc.stderr


def wait_running(service, n=1):
    for _ in range(200):
        if service.request("GET", "/readyz")[2]["jobs"]["running"] >= n:
            return
        time.sleep(0.1)
    raise AssertionError("no job started")


def test_jobs_in_a_batch_awaited_by_long_poll(service):
    names = ["pass_native.cpp", "wrong_answer_native.cpp", "compile_error_native.cpp", "pass_kb.py"]
    batch = {"jobs": [job_body(n) for n in names], "idempotency_key": "grpo-step-1"}
    status, _, body = service.request("POST", "/v1/jobs", batch)
    assert status == 202, body
    ids = body["job_ids"]
    assert len(ids) == 4 and len(set(ids)) == 4
    # The same key again (a trainer's retry): the same jobs, none new.
    status, _, again = service.request("POST", "/v1/jobs", batch)
    assert status == 200 and again["job_ids"] == ids
    status, _, body = service.request("GET", "/v1/jobs?ids=" + ",".join(ids) + "&wait=60")
    assert status == 200, body
    assert [j["job_id"] for j in body["jobs"]] == ids
    assert [j["state"] for j in body["jobs"]] == ["done"] * 4, body
    assert [j["verdict"]["status"] for j in body["jobs"]] == ["pass", "wrong_answer", "compile_error", "pass"]
    job_schema = openapi_schema("Job")
    for j in body["jobs"]:
        validate(j["verdict"], load_schema())
        job_schema.validate({k: v for k, v in j.items() if k != "verdict"})  # The verdict: just above.
    # A long-poll naming 1,024 ids (the most) fits in a request.
    many = ",".join(ids * 256)
    status, _, body = service.request("GET", "/v1/jobs?ids=" + many)
    assert status == 200 and len(body["jobs"]) == 1024, body
    status, _, one = service.request("GET", f"/v1/jobs/{ids[1]}")
    assert status == 200 and one["state"] == "done" and one["verdict"]["status"] == "wrong_answer"
    # One job posted alone; a batch with a bad job is refused whole, naming it.
    status, _, body = service.request("POST", "/v1/jobs", job_body("pass_native.cpp"))
    assert status == 202 and len(body["job_ids"]) == 1
    bad = {"jobs": [job_body("pass_native.cpp"), job_body("pass_native.cpp", backend="gpu")]}
    status, _, body = service.request("POST", "/v1/jobs", bad)
    assert status == 400 and body["error"]["field"] == "jobs[1].backend", body
    for path, field in [("/v1/jobs/" + ids[0] + "?wait=61", "wait"), ("/v1/jobs/" + ids[0] + "?wait=x", "wait"),
                        ("/v1/jobs", "ids")]:
        status, _, body = service.request("GET", path)
        assert status == 400 and body["error"]["field"] == field, (path, body)
    status, _, body = service.request("GET", "/v1/jobs/j_nothing")
    assert status == 404
    for body, field in [({"jobs": []}, "jobs"), ({"jobs": [job_body("pass_native.cpp")], "extra": 1}, ""),
                        ({**job_body("pass_native.cpp"), "idempotency_key": 5}, "idempotency_key")]:
        status, _, answer = service.request("POST", "/v1/jobs", body)
        assert status == 400 and answer["error"]["field"] == field, answer


def test_cancel_a_queued_job(tmp_path):
    s = Service(tmp_path, timeout=20)
    try:
        _, _, hang = s.request("POST", "/v1/jobs", job_body("timeout_native.cpp"))
        wait_running(s)
        _, _, queued = s.request("POST", "/v1/jobs", job_body("wrong_answer_native.cpp"))
        job = queued["job_ids"][0]
        status, _, body = s.request("DELETE", f"/v1/jobs/{job}")
        assert status == 200 and body["state"] == "cancelled", body
        status, _, body = s.request("GET", f"/v1/jobs/{job}?wait=1")
        assert body["state"] == "cancelled" and "verdict" not in body
        status, _, body = s.request("GET", f"/v1/jobs/{hang['job_ids'][0]}?wait=40")
        assert body["state"] == "done" and body["verdict"]["status"] == "timeout"
        status, _, body = s.request("DELETE", f"/v1/jobs/{hang['job_ids'][0]}")
        assert status == 409, body
        assert s.request("DELETE", "/v1/jobs/j_nothing")[0] == 404
    finally:
        assert s.stop() == 0, s.stderr()
    assert "wrong_answer" not in s.stderr()  # Never judged.


def test_kill_9_then_restart_judges_each_accepted_job_once(tmp_path):
    db = tmp_path / "jobs.db"
    s = Service(tmp_path, "--db", str(db), timeout=30, log="first.err")
    _, _, done = s.request("POST", "/v1/jobs", job_body("pass_native.cpp"))
    first = done["job_ids"][0]
    assert s.request("GET", f"/v1/jobs/{first}?wait=60")[2]["state"] == "done"
    _, _, posted = s.request("POST", "/v1/jobs", {"jobs": [job_body("timeout_native.cpp"),
                                                           job_body("wrong_answer_native.cpp"),
                                                           job_body("runtime_error_native.cpp")]})
    wait_running(s)
    s.proc.kill()  # kill -9: no drain, no goodbye.
    s.proc.wait(timeout=10)
    # Its candidate processes die with it or run to their deadline; the restarted server judges the three again.
    again = Service(tmp_path, "--db", str(db), timeout=2, log="second.err")
    try:
        assert "3 job(s) accepted before a restart had no verdict" in again.stderr()
        status, _, body = again.request("GET", "/v1/jobs?ids=" + ",".join(posted["job_ids"]) + "&wait=60")
        assert [j["state"] for j in body["jobs"]] == ["done"] * 3, body
        assert [j["verdict"]["status"] for j in body["jobs"]] == ["timeout", "wrong_answer", "runtime_error"]
        status, _, body = again.request("GET", f"/v1/jobs/{first}")
        assert body["state"] == "done" and body["verdict"]["status"] == "pass"
        # A second server on the same store is refused while this one holds it.
        proc = subprocess.run([anvil_bin(), "serve", "--port", "0", "--db", str(db), "--cache-dir", cache_dir()],
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 1 and "held by another anvil serve" in proc.stderr, proc.stderr
    finally:
        assert again.stop() == 0, again.stderr()
    assert again.stderr().count(" pass ") == 0  # The job finished before the kill was not judged again.
    assert again.stderr().count(" timeout ") == 1


def test_slow_clients_get_408_and_others_are_served(tmp_path):
    """64 slowloris connections, each trickling its request a byte at a time: /healthz and verdicts are served
    meanwhile, and each slow one is cut off with 408 once --request-timeout passes."""
    import socket
    s = Service(tmp_path, "--request-timeout", "2")
    port = int(s.url.rsplit(":", 1)[1])
    slow = []
    try:
        for _ in range(64):
            c = socket.create_connection(("127.0.0.1", port))
            c.sendall(b"POST /v1/evaluate HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            slow.append(c)
        start = time.monotonic()
        while time.monotonic() - start < 1.5:
            for c in slow:
                c.sendall(b"X")  # Never a whole header line.
            status, _, body = s.request("GET", "/healthz", timeout=5)
            assert status == 200 and body == {"status": "ok"}
            time.sleep(0.1)
        status, _, body = s.evaluate("pass_native.cpp")
        assert status == 200 and body["verdict"]["status"] == "pass"
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
            cut += b"408 Request Timeout" in got
        assert cut == 64
    finally:
        for c in slow:
            c.close()
        assert s.stop() == 0, s.stderr()


def test_repeats_come_from_the_verdict_cache_and_identical_jobs_join(tmp_path):
    s = Service(tmp_path, timeout=3, cache=True)
    nonce = f"\n// {uuid.uuid4()}\n"  # A candidate no earlier run has judged.
    passing = job_body("pass_native.cpp")
    passing["candidate_source"] += nonce
    try:
        status, _, first = s.request("POST", "/v1/evaluate", passing)
        assert status == 200 and first["verdict"]["status"] == "pass" and "cached" not in first["verdict"], first
        status, _, again = s.request("POST", "/v1/evaluate", passing)
        assert status == 200 and again["verdict"]["cached"] is True, again
        assert again["job_id"] != first["job_id"]
        validate(again["verdict"], load_schema())
        assert again["verdict"]["candidate"]["path"] == first["verdict"]["candidate"]["path"]
        assert again["verdict"]["task"]["path"] == first["verdict"]["task"]["path"]
        # Another option that changes the verdict (the reward's): judged again.
        status, _, other = s.request("POST", "/v1/evaluate", {**passing, "reward": {"lambda": 0}})
        assert status == 200 and "cached" not in other["verdict"]
        assert 'anvil_verdict_cache_hits_total 1' in s.request("GET", "/metrics")[2]
        # Identical requests in flight are one job; a timeout is never kept, so afterwards it is judged again.
        hang = job_body("timeout_native.cpp")
        hang["candidate_source"] += nonce
        status, _, body = s.request("POST", "/v1/jobs", {"jobs": [hang, hang, passing]})
        assert status == 202
        ids = body["job_ids"]
        assert ids[0] == ids[1] and ids[2] != ids[0], ids
        status, _, body = s.request("POST", "/v1/jobs", hang)
        assert body["job_ids"] == [ids[0]]
        status, _, body = s.request("GET", f"/v1/jobs?ids={ids[0]},{ids[2]}&wait=30")
        assert [j["verdict"]["status"] for j in body["jobs"]] == ["timeout", "pass"], body
        assert body["jobs"][1]["verdict"]["cached"] is True
        status, _, body = s.request("POST", "/v1/jobs", hang)
        assert body["job_ids"] != [ids[0]]
    finally:
        assert s.stop() == 0, s.stderr()
    assert s.stderr().count(" timeout ") == 2  # Judged once per flight, not once per request.


def test_a_degenerate_task_is_refused_once_found(tmp_path):
    trivial = ROOT / "tests" / "redteam" / "trivial"
    task = (trivial / "always_zero.py").read_text()
    zeros = (trivial / "zeros_native.cpp").read_text()
    s = Service(tmp_path)
    try:
        request = {"task_source": task, "candidate_source": zeros, "candidate_format": "native", "backend": "cpu"}
        status, _, body = s.request("POST", "/v1/evaluate", request)
        assert status == 200 and body["verdict"]["task_degenerate"] is True, body
        status, _, body = s.request("POST", "/v1/evaluate", request)
        assert status == 422 and body["error"]["field"] == "task_source", body
        assert "degenerate under policy musacoder" in body["error"]["message"]
        assert "out0: zeros" in body["error"]["message"]
        # Under a policy without the guard the task is judged as KernelBench judges it.
        status, _, body = s.request("POST", "/v1/evaluate", {**request, "policy": "kernelbench"})
        assert status == 200, body
    finally:
        assert s.stop() == 0, s.stderr()


def test_64_concurrent_clients(tmp_path):
    """64 clients at once, each with its own connection and candidate: every one gets its verdict, well within a
    minute, and /metrics counts them all."""
    s = Service(tmp_path, "-j", "2")
    try:
        def one(i):
            body = job_body("pass_native.cpp" if i % 2 == 0 else "wrong_answer_native.cpp")
            body["candidate_source"] += f"\n// client {i}\n"
            return s.request("POST", "/v1/evaluate", body, timeout=120)

        start = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(64) as pool:
            answers = list(pool.map(one, range(64)))
        took = time.monotonic() - start
        assert [a[0] for a in answers] == [200] * 64
        assert [a[2]["verdict"]["status"] for a in answers] == ["pass", "wrong_answer"] * 32
        assert len({a[2]["job_id"] for a in answers}) == 64
        assert took < 60, took
        text = s.request("GET", "/metrics")[2]
        assert 'anvil_http_requests_total{route="/v1/evaluate",code="200"} 64' in text
    finally:
        assert s.stop() == 0, s.stderr()
