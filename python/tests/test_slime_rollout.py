# anvil-test-label: verl
"""anvil's slime rollout and hooks (python/anvil_client/slime_rollout.py; docs/rl.md, "slime") through slime's own
signatures at 624b824a, stood in for by python/tests/slime_stub (slime needs Megatron and SGLang): the generate
function against a scripted SGLang `/generate` over HTTP, the real `anvil serve` judging every answer, then the
sample filter, the reward post-process, MirrorPop as the TIS hook and BDR as the data source. Runs in .venv-verl
(transformers for the tokenizer; scripts/verl_venv.sh)."""

import json
import os
import socket
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VENV_PYTHON = Path(os.environ.get("ANVIL_VERL_VENV", ROOT / ".venv-verl")) / "bin" / "python"
RELU = (ROOT / "examples" / "tasks" / "relu.py").read_text()
CANDIDATES = ROOT / "examples" / "candidates" / "relu"


def answer(name):
    return f"Here is my kernel.\n\n```python\n{(CANDIDATES / name).read_text()}```\n"


WRONG, PASS = answer("wrong_answer_kb.py"), answer("pass_kb.py")


def run(tmp_path, url, groups, env=None, **spec):
    if not VENV_PYTHON.exists():
        pytest.fail(f"{VENV_PYTHON} is missing: run scripts/verl_venv.sh")
    path = tmp_path / "spec.json"
    path.write_text(json.dumps({"groups": groups, **spec}))
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "ANVIL_URL": url, "ANVIL_BACKEND": "cpu",
           "ANVIL_PRIME_ECHO": "0.2,0.1", "ANVIL_MIRROR_POP_DELTA": "0.05", "ANVIL_BDR_REISSUE_PROB": "1.0",
           **(env or {})}
    proc = subprocess.run([str(VENV_PYTHON), str(ROOT / "python" / "tests" / "slime_rollout.py"), str(path)],
                          capture_output=True, text=True, timeout=600, env=env)
    return proc


def test_rollout_rewards_masks_filters_mirror_pop_and_bdr(service, tmp_path):
    groups = [{"task": RELU, "answers": [[WRONG, PASS], [PASS]]},
              {"task": RELU, "answers": [["I would fuse the loops.", WRONG, WRONG], [WRONG, WRONG, WRONG]]}]
    proc = run(tmp_path, service, groups, train_shift={"1": 0.5}, bdr_draws=2)
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = json.loads(proc.stdout)
    s = out["samples"]
    assert [x["metadata"]["anvil_statuses"] for x in s] == [["wrong_answer", "pass"], ["pass"],
                                                            ["no_code", "wrong_answer", "wrong_answer"],
                                                            ["wrong_answer"] * 3]
    # PrimeEcho by hand: 0.75 * s1 + 0.25 * max(s) + bonus.
    assert [x["reward"] for x in s] == pytest.approx([-0.75 + 0.25 + 0.1, 1.0 + 0.2, -1.0, -1.0])
    firsts = [WRONG, PASS, "I would fuse the loops.", WRONG]
    for x, first in zip(s, firsts):  # first_turn: the first answer alone, all of it trained on, its log-probs kept
        assert x["response_text"] == first + "<eos>" and x["loss_mask"] == [1] * x["response_length"]
        assert len(x["rollout_log_probs"]) == x["response_length"] and x["status"] == "completed"
        assert not x["remove_sample"] and x["metadata"]["anvil_infra_error"] == 0
    assert all(c["return_logprob"] for c in out["calls"]) and len(out["calls"]) == 2 + 1 + 3 + 3
    # GRPO within each group: [-0.4, 1.2] -> -1/sqrt(2)*sqrt(2)... (r - mean) / std with std = 1.6 / sqrt(2).
    a = 0.8 / (1.6 / 2 ** 0.5 + 1e-6)
    assert out["advantages"] == pytest.approx([-a, a, 0.0, 0.0])
    assert out["raw"] == pytest.approx([x["reward"] for x in s])
    # MirrorPop: sample 1's training log-probs moved by 0.5 on every other token: mean gap 0.25 > 0.05, dropped.
    assert out["kept"] == [True, False, True, True]
    # BDR: group 1 failed throughout: buffered once; with reissue 1.0 the next batch opens with its repair task.
    assert out["bdr_buffered"] == 1
    first, fresh = out["bdr_drawn"]
    assert first["bdr"] and first["label_is_task"] and first["n"] == 2
    assert first["roles"] == ["system", "user", "assistant", "user"] and first["failed"] == WRONG
    assert first["last"].startswith("Here is the verifier's feedback") and "Wrong answer" in first["last"]
    assert not fresh["bdr"]  # the buffer had one entry: the other group is a fresh prompt


def test_trajectory_mode_and_the_machines_failure(service, tmp_path):
    proc = run(tmp_path, service, [{"task": RELU, "answers": [[WRONG, PASS]]}], env={"ANVIL_TRAIN_ON": "trajectory"})
    assert proc.returncode == 0, proc.stderr[-4000:]
    (x,) = json.loads(proc.stdout)["samples"]
    assert x["masked_text"] == WRONG + "<eos>"  # the loss on the first answer's tokens alone
    assert "Wrong answer" in x["response_text"] and x["response_text"].endswith(PASS + "<eos>")
    n = sum(x["loss_mask"])
    assert x["loss_mask"] == [1] * n + [0] * (x["response_length"] - n)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}"
    proc = run(tmp_path, dead, [{"task": RELU, "answers": [[PASS], [PASS]]}], env={"ANVIL_RETRIES": "0"})
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = json.loads(proc.stdout)
    for x in out["samples"]:
        assert x["metadata"]["anvil_infra_error"] == 1 and x["remove_sample"] and x["reward"] == 0.0
        assert x["loss_mask"] == [0] * x["response_length"]
    assert out["advantages"] == [0.0, 0.0]


def test_the_bonuses_must_be_set(tmp_path):
    proc = run(tmp_path, "http://127.0.0.1:9", [{"task": RELU, "answers": [[PASS]]}], env={"ANVIL_PRIME_ECHO": ""})
    assert proc.returncode != 0 and "ANVIL_PRIME_ECHO" in proc.stderr
