# anvil-test-label: verl
"""verl 0.9.1 from PyPI scoring a batch against the real `anvil serve`, through verl's own reward loop worker
(python/tests/verl_reward_loop.py, run in .venv-verl: scripts/verl_venv.sh && ctest --test-dir build -L verl):
anvil's reward-loop manager (reward.reward_manager.source=importlib) and compute_score under verl's naive manager
(reward.custom_reward_function), both loaded as a trainer's config names them."""

import json
import math
import os
import re
import socket
import subprocess
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VENV_PYTHON = Path(os.environ.get("ANVIL_VERL_VENV", ROOT / ".venv-verl")) / "bin" / "python"
RELU = (ROOT / "examples" / "tasks" / "relu.py").read_text()
CANDIDATES = ROOT / "examples" / "candidates" / "relu"
KEYS = ["score", "anvil_status_code", "anvil_q", "anvil_speedup", "anvil_infra_error", "anvil_cached"]


def answer(name):
    return f"Here is my kernel.\n\n```cpp\n{(CANDIDATES / name).read_text()}```\n"


def verl_batch(tmp_path, reward, responses, ground_truths):
    if not VENV_PYTHON.exists():
        pytest.fail(f"{VENV_PYTHON} is missing: run scripts/verl_venv.sh")
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"reward": reward, "responses": responses, "ground_truths": ground_truths}))
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "RAY_USAGE_STATS_ENABLED": "0"}
    proc = subprocess.run([str(VENV_PYTHON), str(ROOT / "python" / "tests" / "verl_reward_loop.py"), str(spec)],
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout)


def manager_config(url, **kwargs):
    return {"reward_manager": {"source": "importlib", "name": "AnvilRewardManager",
                               "module": {"path": str(ROOT / "python" / "anvil_client" / "verl_manager.py")}},
            "custom_reward_function": {"reward_kwargs": {"anvil_url": url, "backend": "cpu",
                                                         "candidate_format": "native", **kwargs}}}


def jobs_posts(url):
    """How many POST /v1/jobs the service has answered: 202 (accepted) or 422 (one job refused); a GET of
    /v1/jobs?ids= answers 200."""
    text = urllib.request.urlopen(url + "/metrics", timeout=10).read().decode()
    return sum(int(n) for n in re.findall(r'anvil_http_requests_total\{route="/v1/jobs",code="(?:202|422)"\} (\d+)',
                                          text))


def check_flat(out):
    # verl makes one array per key of the first sample's extra info: every sample must have them all.
    assert out["keys"] == KEYS
    for info in out["infos"]:
        assert list(info) == KEYS
    for i, score in enumerate(out["scores"]):
        # The reward sits on the response's last token, nowhere else.
        assert out["rm_scores_at_last_token"][i] == pytest.approx(score)
        assert out["rm_scores_sum"][i] == pytest.approx(score)


def test_anvil_manager_scores_a_batch_in_one_post(service, tmp_path):
    responses = [answer("pass_native.cpp"), "I cannot write this kernel.", answer("wrong_answer_native.cpp"),
                 answer("compile_error_native.cpp"), answer("pass_native.cpp") + "\n", answer("segfault_native.cpp")]
    before = jobs_posts(service)
    out = verl_batch(tmp_path, manager_config(service), responses, [RELU] * len(responses))
    assert out["manager"] == "AnvilRewardManager"
    check_flat(out)
    codes = out["columns"]["anvil_status_code"]
    assert codes == [0, 7, 4, 1, 0, 2]
    assert out["scores"][0] >= 1.0 and out["scores"][4] >= 1.0
    assert out["scores"][1:4] == [-1.0, -1.0, -1.0] and out["scores"][5] == -1.0
    assert out["columns"]["anvil_infra_error"] == [0] * 6
    assert not math.isnan(out["columns"]["anvil_speedup"][0]) and math.isnan(out["columns"]["anvil_speedup"][3])
    # One batch: the no-code sample refused by name, the other five posted again together.
    assert jobs_posts(service) - before == 2


def test_anvil_manager_flags_a_dead_service_as_infra_error(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # Nothing listens there once closed.
    out = verl_batch(tmp_path, manager_config(f"http://127.0.0.1:{port}", retries=1),
                     [answer("pass_native.cpp"), answer("wrong_answer_native.cpp")], [RELU, RELU])
    check_flat(out)
    assert out["columns"]["anvil_infra_error"] == [1, 1]
    assert out["scores"] == [0.0, 0.0]  # Neutral, and flagged: never the candidate's fault.


def test_compute_score_under_verls_naive_manager(service, tmp_path):
    reward = {"custom_reward_function": {"path": str(ROOT / "python" / "anvil_client" / "verl.py"),
                                         "name": "compute_score",
                                         "reward_kwargs": {"anvil_url": service, "backend": "cpu",
                                                           "candidate_format": "native"}}}
    out = verl_batch(tmp_path, reward, [answer("pass_native.cpp"), "no code here"], [RELU, RELU])
    assert out["manager"] == "NaiveRewardManager"
    check_flat(out)
    assert out["columns"]["anvil_status_code"] == [0, 7]
