"""`anvil model-check` against a real HTTP server that speaks the OpenAI protocol with scripted answers
(tests/support/openai_server.py): the model client's answers, retries, timeouts, errors and key handling."""

import json
import os
import socket
import subprocess
import sys
import time

import pytest

from conftest import NO_KEYS, ROOT, ModelServer, run_anvil

GOOD = {"content": "ready", "finish_reason": "stop"}


@pytest.fixture
def serve(tmp_path):
    servers = []

    def start(*answers):
        servers.append(ModelServer(tmp_path, list(answers)))
        return servers[-1]

    yield start
    for s in servers:
        s.stop()


def check(url, *args, env=None):
    proc = run_anvil("model-check", "--endpoint", url, "--model", "test-model", "--json", *args,
                     env={**NO_KEYS, **(env or {})}, timeout=120)
    result = json.loads(proc.stdout) if proc.stdout.strip().startswith("{") else None
    return result, proc


def test_an_answer_comes_back_with_its_tokens_and_no_key_means_no_header(serve):
    s = serve(GOOD)
    result, proc = check(s.url, "--max-tokens", "7", "--seed", "3")
    assert proc.returncode == 0, proc.stderr
    assert result["ok"] and result["content"] == "ready" and result["finish_reason"] == "stop"
    assert result["usage"]["completion_tokens"] == 1 and result["attempts"] == 1
    assert result["key"] == "none"
    [req] = s.requests()
    assert req["authorization"] is None
    assert req["body"]["model"] == "test-model" and req["body"]["max_tokens"] == 7 and req["body"]["seed"] == 3
    assert req["body"]["messages"][-1]["role"] == "user"
    # The text form says the same.
    proc = run_anvil("model-check", "--endpoint", s.url, "--model", "test-model", env=NO_KEYS, timeout=60)
    assert proc.returncode == 0 and "content   ready" in proc.stdout and "finish_reason stop" in proc.stdout


def test_the_key_comes_from_the_environment_or_a_file_never_from_argv(serve, tmp_path):
    s = serve(GOOD)
    result, proc = check(s.url, env={"OPENAI_API_KEY": "sk-openai", "ANVIL_OPENAI_API_KEY": "sk-anvil"})
    assert proc.returncode == 0, proc.stderr
    assert result["key"] == "ANVIL_OPENAI_API_KEY"
    assert s.requests()[-1]["authorization"] == "Bearer sk-anvil"
    key = tmp_path / "key"
    key.write_text("sk-from-file\n")
    key.chmod(0o600)
    result, proc = check(s.url, "--api-key-file", str(key), env={"ANVIL_OPENAI_API_KEY": "sk-anvil"})
    assert proc.returncode == 0, proc.stderr
    assert s.requests()[-1]["authorization"] == "Bearer sk-from-file"
    assert "sk-from-file" not in proc.stdout + proc.stderr
    sent = len(s.requests())
    proc = run_anvil("model-check", "--endpoint", s.url, "--model", "m", "--api-key", "sk-argv", env=NO_KEYS)
    assert proc.returncode == 2 and "never taken from the command line" in proc.stderr, proc.stderr
    assert len(s.requests()) == sent


def test_a_key_file_that_candidate_code_could_read_is_refused(serve, tmp_path):
    s = serve(GOOD)
    # anvil's own Python package is on every candidate's import path.
    readable = ROOT / "python" / "anvil_py" / f"test-key-{os.getpid()}"
    readable.write_text("sk-readable\n")
    try:
        result, proc = check(s.url, "--api-key-file", str(readable))
    finally:
        readable.unlink()
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "candidate code may read" in proc.stderr and "sk-readable" not in proc.stderr
    assert s.requests() == []


def test_rate_limits_are_retried_after_the_servers_delay(serve):
    s = serve({"status": 429, "headers": {"Retry-After": "1"}}, GOOD)
    started = time.monotonic()
    result, proc = check(s.url)
    assert proc.returncode == 0, proc.stderr
    assert result["attempts"] == 2 and result["content"] == "ready"
    assert time.monotonic() - started >= 1.0


def test_server_errors_are_retried_then_reported(serve):
    s = serve({"status": 503, "body": json.dumps({"error": {"message": "overloaded, try later"}})})
    result, proc = check(s.url, "--retries", "2")
    assert proc.returncode == 1
    assert result["failure"] == "http_error" and result["attempts"] == 3 and result["http_status"] == 503
    assert "overloaded, try later" in result["message"] and "127.0.0.1" in result["message"]


def test_a_refused_key_is_not_retried_and_says_what_to_check(serve):
    s = serve({"status": 401, "body": json.dumps({"error": {"message": "invalid api key"}})})
    result, proc = check(s.url, env={"ANVIL_OPENAI_API_KEY": "sk-wrong"})
    assert proc.returncode == 1 and result["attempts"] == 1
    assert "invalid api key" in result["message"] and "ANVIL_OPENAI_API_KEY" in result["message"]
    assert "sk-wrong" not in proc.stdout + proc.stderr


def test_garbage_is_a_server_error_that_names_what_came_back(serve):
    s = serve({"raw": "<html><body>502 Bad Gateway</body></html>"})
    result, proc = check(s.url)
    assert proc.returncode == 1
    assert result["failure"] == "bad_answer" and "<html><body>502 Bad Gateway" in result["message"]
    s2 = serve({"content": None, "raw": json.dumps({"object": "list", "data": []})})
    result, proc = check(s2.url)
    assert result["failure"] == "bad_answer" and "no choices" in result["message"]


def test_a_dropped_connection_is_asked_again(serve):
    s = serve({"drop": True}, GOOD)
    result, proc = check(s.url)
    assert proc.returncode == 0, proc.stderr
    assert result["attempts"] == 2


def test_a_slow_answer_times_out(serve):
    s = serve({**GOOD, "delay": 5})
    started = time.monotonic()
    result, proc = check(s.url, "--timeout", "1")
    assert proc.returncode == 1
    assert result["failure"] == "timeout" and "within 1 s" in result["message"]
    assert time.monotonic() - started < 4


def test_an_unreachable_server_is_named_and_given_up_on():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # Nothing listens there once closed.
    started = time.monotonic()
    result, proc = check(f"http://user:sk-in-url@127.0.0.1:{port}/v1?key=sk-in-url", "--unreachable-after", "2")
    elapsed = time.monotonic() - started
    assert proc.returncode == 1
    assert result["failure"] == "unreachable" and result["attempts"] >= 2
    assert f"cannot reach http://127.0.0.1:{port}/v1 for 2 s" in result["message"], result["message"]
    assert "sk-in-url" not in proc.stdout + proc.stderr
    assert 2 <= elapsed < 10


def test_no_endpoint_is_a_usage_error():
    proc = run_anvil("model-check", "--model", "m", env=NO_KEYS)
    assert proc.returncode == 2 and "--endpoint" in proc.stderr
    proc = run_anvil("model-check", "--model", "m", "--endpoint", "localhost:8000", env=NO_KEYS)
    assert proc.returncode == 2 and "not an http(s) URL" in proc.stderr
