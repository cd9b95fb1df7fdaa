"""The slime and OpenRLHF adapters driven as their trainers drive them (THUDM/slime 624b824, OpenRLHF 3c3be62):
slime awaits `custom_rm(args, sample)` (a list of samples with --group-rm) and, with --rm-type remote_rm, posts
{prompt, response, label} and takes the body as the reward; OpenRLHF posts {query, prompts, labels} to its remote
reward URL and reads {rewards, scores, extra_logs}. Against the real `anvil serve`."""

import asyncio
import hashlib
import json
import urllib.request
from argparse import Namespace
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RELU = (ROOT / "examples" / "tasks" / "relu.py").read_text()
TASK_HASH = hashlib.sha256(RELU.encode()).hexdigest()
CANDIDATES = ROOT / "examples" / "candidates" / "relu"


@dataclass
class Sample:
    """The fields of slime's Sample (slime/utils/types.py) an rm reads."""
    prompt: str = ""
    response: str = ""
    label: str = ""
    metadata: dict = field(default_factory=dict)


def answer(name):
    return f"My kernel:\n```cpp\n{(CANDIDATES / name).read_text()}```\n"


def post(url, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as r:
        return r.status, json.loads(r.read())


def register(service):
    status, body = post(service + "/v1/tasks", {"task_source": RELU})
    assert status == 201 and body["task_hash"] == TASK_HASH


def test_slime_custom_rm_and_group_rm(service, monkeypatch):
    register(service)
    monkeypatch.setenv("ANVIL_URL", service)
    monkeypatch.setenv("ANVIL_BACKEND", "cpu")
    monkeypatch.setenv("ANVIL_CANDIDATE_FORMAT", "native")
    from anvil_client.slime import custom_rm
    args = Namespace(reward_key="score", group_rm=False)
    one = asyncio.run(custom_rm(args, Sample(prompt="p", response=answer("pass_native.cpp"), label=TASK_HASH)))
    assert one["anvil_status_code"] == 0 and one["score"] >= 1.0
    group = asyncio.run(custom_rm(Namespace(group_rm=True), [
        Sample(response=answer("wrong_answer_native.cpp"), label=TASK_HASH),
        Sample(response="no code here", label=TASK_HASH)]))
    assert [g["anvil_status_code"] for g in group] == [4, 7]
    assert [g["score"] for g in group] == [-1.0, -1.0]
    assert all(list(g) == list(one) for g in group)


def test_slime_remote_rm_and_openrlhf_compat_endpoints(service):
    register(service)
    url = service + "/v1/compat/slime?format=native"
    status, reward = post(url, {"prompt": "write relu", "response": answer("pass_native.cpp"), "label": TASK_HASH})
    assert status == 200 and reward["score"] >= 1.0 and reward["anvil_status_code"] == 0
    status, reward = post(url, {"prompt": "write relu", "response": "no", "label": TASK_HASH})
    assert reward == {"score": -1.0, "anvil_status_code": 7, "anvil_q": 0.0, "anvil_speedup": None,
                      "anvil_infra_error": 0, "anvil_cached": 0}
    # Past the trainer's timeout: a flagged number, not a hang.
    status, reward = post(service + "/v1/compat/slime?format=native&deadline_s=0.5",
                          {"prompt": "p", "response": answer("timeout_native.cpp"), "label": TASK_HASH})
    assert status == 200 and reward["anvil_infra_error"] == 1 and reward["score"] == 0.0

    prompt = "<|user|>write relu<|assistant|>"
    status, body = post(service + "/v1/compat/openrlhf?format=native",
                        {"query": [prompt + answer("pass_native.cpp"), prompt + answer("compile_error_native.cpp")],
                         "prompts": [prompt, prompt], "labels": [TASK_HASH, TASK_HASH]})
    assert status == 200
    assert body["rewards"][0] >= 1.0 and body["rewards"][1] == -1.0
    assert body["scores"] == [1.0, 0.0]
    assert body["extra_logs"]["anvil_status_code"] == [0, 1]
    # A label that is no task's hash, and a malformed body: refused, naming what is wrong.
    for bad in ({"query": ["x"], "labels": ["not-a-hash"]}, {"query": ["x"], "labels": []}):
        try:
            post(service + "/v1/compat/openrlhf", bad)
            raise AssertionError("accepted")
        except urllib.error.HTTPError as e:
            assert e.code == 400, e.read()
