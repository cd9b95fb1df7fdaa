# anvil-test-label: verl
"""anvil's multi-turn agent loop, advantage estimator and MirrorPop policy loss for verl 0.9.1 (docs/rl.md, "verl"),
at verl's own boundary in .venv-verl (scripts/verl_venv.sh): the loop as verl's worker makes it, with a fake server
manager returning verl's TokenOutput (python/tests/verl_agent_loop.py) and the real `anvil serve` judging each answer;
the estimator and the loss from verl's registries after VERL_USE_EXTERNAL_MODULES loads them (verl_algos.py)."""

import json
import math
import os
import socket
import subprocess
from pathlib import Path

import pytest
import torch

from anvil_rl import grpo_advantages, mirror_pop_keep, prime_echo

ROOT = Path(__file__).resolve().parents[2]
VENV_PYTHON = Path(os.environ.get("ANVIL_VERL_VENV", ROOT / ".venv-verl")) / "bin" / "python"
RELU = (ROOT / "examples" / "tasks" / "relu.py").read_text()
CANDIDATES = ROOT / "examples" / "candidates" / "relu"
BONUSES = {"bonus_first": 0.2, "bonus_second": 0.1}


def answer(name):
    return f"Here is my kernel.\n\n```python\n{(CANDIDATES / name).read_text()}```\n"


def in_verl(tmp_path, script, spec, env=None):
    if not VENV_PYTHON.exists():
        pytest.fail(f"{VENV_PYTHON} is missing: run scripts/verl_venv.sh")
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "RAY_USAGE_STATS_ENABLED": "0",
           **(env or {})}
    return subprocess.run([str(VENV_PYTHON), str(ROOT / "python" / "tests" / script), str(path)],
                          capture_output=True, text=True, timeout=600, env=env)


def run_loop(tmp_path, url, samples, **loop):
    spec = {"loop": {"anvil_url": url, "backend": "cpu", "trials": 2, "retries": 0, "max_turns": 3, **BONUSES,
                     **loop}, "ground_truth": RELU, "samples": samples}
    proc = in_verl(tmp_path, "verl_agent_loop.py", spec)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout)


SAMPLES = [[answer("wrong_answer_kb.py"), answer("pass_kb.py")],               # repaired at turn 2
           ["I would fuse the loops.", answer("wrong_answer_kb.py"), answer("wrong_answer_kb.py")],  # never
           [answer("pass_kb.py")]]                                                # passes at once


def test_turns_are_judged_repaired_and_scored_by_prime_echo(service, tmp_path):
    out = run_loop(tmp_path, service, SAMPLES)
    s0, s1, s2 = out["outputs"]
    assert s0["extra_fields"]["anvil_statuses"] == ["wrong_answer", "pass"]
    assert s1["extra_fields"]["anvil_statuses"] == ["no_code", "wrong_answer", "wrong_answer"]
    assert s2["extra_fields"]["anvil_statuses"] == ["pass"]
    # By hand: 0.75 * s1 + 0.25 * max(s) + bonus. The wrong answer is right on no trial: -1.
    assert s0["reward_score"] == pytest.approx(0.75 * -1 + 0.25 * 1 + 0.1)  # -0.4: passed at turn 2
    assert s1["reward_score"] == pytest.approx(-1.0)
    assert s2["reward_score"] == pytest.approx(1.0 + 0.2)
    for s in (s0, s1, s2):
        turns = s["extra_fields"]["turn_scores"]
        assert s["reward_score"] == pytest.approx(prime_echo(turns, bonus_first=0.2, bonus_second=0.1))
        assert s["extra_fields"]["anvil_infra_error"] == 0
        assert s["extra_fields"]["anvil_logprobs_mode"] == "processed_logprobs"
    # The model saw the verifier's feedback: turn 2 of sample 0 was asked with the wrong answer's "Wrong answer".
    assert [(c["sample"], c["turn"]) for c in out["calls"]].count((1, 3)) == 1
    assert not any(c["sample"] == 2 and c["turn"] > 1 for c in out["calls"])  # it stopped at its pass
    # train_on first_turn (the default): the prompt and the first response alone, all of it trained on.
    for s, first in ((s0, SAMPLES[0][0]), (s1, SAMPLES[1][0]), (s2, SAMPLES[2][0])):
        assert s["response_text"] == first + "<eos>"
        assert s["response_mask"] == [1] * len(s["response_ids"])
        assert len(s["response_logprobs"]) == len(s["response_ids"])
        assert s["prompt_text"].endswith("Make this model faster.<eos><|assistant|>")


def test_trajectory_mode_trains_on_the_first_response_only(service, tmp_path):
    out = run_loop(tmp_path, service, SAMPLES[:2], train_on="trajectory")
    s0, s1 = out["outputs"]
    for s, first in ((s0, SAMPLES[0][0]), (s1, SAMPLES[1][0])):
        assert s["masked_text"] == first + "<eos>"  # exactly the first response's tokens carry the loss
        n = sum(s["response_mask"])
        assert s["response_mask"] == [1] * n + [0] * (len(s["response_ids"]) - n)
    assert "Wrong answer" in s0["response_text"] and s0["response_text"].endswith(SAMPLES[0][1] + "<eos>")
    assert s1["response_text"].count("<|user|>") == 2  # two repair requests between three answers
    assert "no code block" in s1["response_text"]
    assert s0["reward_score"] == pytest.approx(-0.4)


def test_the_machines_failure_leaves_nothing_to_learn(tmp_path):
    with socket.socket() as s:  # A port nothing listens on: the service is gone.
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"
    out = run_loop(tmp_path, dead, [[answer("pass_kb.py")]])
    (s0,) = out["outputs"]
    assert s0["extra_fields"]["anvil_infra_error"] == 1 and s0["extra_fields"]["anvil_statuses"] == ["infra_error"]
    assert s0["response_mask"] == [0] * len(s0["response_ids"]) and len(s0["response_ids"]) > 0
    assert s0["reward_score"] == 0.0 and math.isnan(s0["extra_fields"]["anvil_prime_echo"])


def test_the_bonuses_must_be_set(tmp_path):
    spec = {"loop": {"anvil_url": "http://127.0.0.1:9", "max_turns": 3}, "ground_truth": RELU, "samples": [["x"]]}
    proc = in_verl(tmp_path, "verl_agent_loop.py", spec)
    assert proc.returncode != 0 and "bonus_first and bonus_second" in proc.stderr


def test_the_estimator_leaves_infra_rows_out_and_mirror_pop_drops_whole_sequences(tmp_path):
    # Group a: three rewards and an infra row (all-zero mask); group b: one reward and an infra row.
    rewards, index = [2.0, -1.0, -1.0, 5.0, 0.7, 3.0], ["a", "a", "a", "a", "b", "b"]
    masks = [[1, 1, 1], [1, 1, 0], [1, 0, 0], [0, 0, 0], [1, 1, 1], [0, 0, 0]]
    old = [[-1.0, -2.0, -0.5], [-1.0, -1.0, -1.0], [-0.3, -0.3, -0.3]]
    # Row 0: |gaps| 0.02, 0.04, (0.5 unmasked) -> mean 0.03, kept at delta 0.05. Row 1: +0.1 and -0.1 cancel in a
    # signed mean, 0.1 in MirrorPop's: dropped. Row 2: no mask: kept.
    rollout = [[-1.02, -2.04, -1.0], [-1.1, -0.9, -1.0], [-9.0, -9.0, -9.0]]
    lmask = [[1, 1, 0], [1, 1, 1], [0, 0, 0]]
    kept = [mirror_pop_keep(o, r, m, 0.05) for o, r, m in zip(old, rollout, lmask)]
    assert kept == [True, False, True]
    spec = {"estimator": {"rewards": rewards, "masks": masks, "index": index},
            "loss": {"old": old, "new": [[-0.9, -2.1, -0.5], [-1.0, -0.8, -1.2], [-0.3, -0.3, -0.3]],
                     "rollout": rollout, "advantages": [[1.0] * 3, [-1.0] * 3, [0.5] * 3], "mask": lmask,
                     "expect_kept": kept}}
    proc = in_verl(tmp_path, "verl_algos.py", spec, env={"VERL_USE_EXTERNAL_MODULES": "anvil_client.verl_algos",
                                                          "ANVIL_MIRROR_POP_DELTA": "0.05",
                                                          "PYTHONPATH": str(ROOT / "python")})
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = json.loads(proc.stdout)
    a = grpo_advantages([2.0, -1.0, -1.0, None]) + grpo_advantages([0.7, None])  # None: the infra rows
    assert a[4] == 0.0  # a group left with one reward
    for row, want, mask in zip(out["advantages"], a, masks):
        assert row == pytest.approx([(want or 0.0) * m for m in mask], rel=1e-5)
    assert out["same_returns"]
    assert out["dropped"] == pytest.approx(1 / 3)
    assert out["loss"] == pytest.approx(out["vanilla_on_kept"])
    assert "rollout_is=token" in out["without_weights"]


def test_the_first_turn_alone_gives_the_trajectorys_loss_under_causal_attention():
    # A small causal transformer: the log-probs of the first response's tokens, and the gradient of the loss on them,
    # are the same whether the sequence holds the later turns (masked out) or ends after the first response.
    torch.manual_seed(0)
    vocab, width = 64, 32
    emb, pos = torch.nn.Embedding(vocab, width), torch.nn.Embedding(256, width)
    block = torch.nn.TransformerEncoderLayer(width, 4, 64, dropout=0.0, batch_first=True)
    head = torch.nn.Linear(width, vocab)
    params = [*emb.parameters(), *pos.parameters(), *block.parameters(), *head.parameters()]

    def loss_and_grads(ids, mask):
        ids = torch.tensor([ids])
        n = ids.shape[1]
        h = block(emb(ids) + pos(torch.arange(n)), src_mask=torch.nn.Transformer.generate_square_subsequent_mask(n),
                  is_causal=True)
        logp = head(h).log_softmax(-1)[0, :-1].gather(-1, ids[0, 1:, None])[:, 0]  # token t+1 given t and before
        m = torch.tensor(mask[1:], dtype=torch.float32)
        loss = -(logp * m).sum() / m.sum()
        return loss, torch.autograd.grad(loss, params)

    g = torch.Generator().manual_seed(1)
    prompt, first, env, second, env2, third = (torch.randint(0, vocab, (n,), generator=g).tolist()
                                               for n in (40, 30, 25, 30, 25, 30))
    full = prompt + first + env + second + env2 + third
    full_mask = [0] * len(prompt) + [1] * len(first) + [0] * (len(full) - len(prompt) - len(first))
    short = prompt + first
    loss_full, grads_full = loss_and_grads(full, full_mask)
    loss_short, grads_short = loss_and_grads(short, full_mask[:len(short)])
    assert loss_short.item() == pytest.approx(loss_full.item(), rel=1e-5)
    for a, b in zip(grads_full, grads_short):
        assert torch.allclose(a, b, atol=1e-6)
    assert len(short) / len(full) < 0.4  # the tokens a step processes: about a third here


def test_bdr_reissues_an_all_failed_group_to_a_later_group_across_workers(service, tmp_path):
    # Step 1: group g1 fails on all 4 samples (its last turns too), g2 passes. Step 2: group g3, a softmax task,
    # draws g1's repair task (reissue_prob 1) on both workers and answers it against g1's ReLU.
    softmax = (ROOT / "examples" / "tasks" / "softmax.py").read_text()
    wrong, right = answer("wrong_answer_kb.py"), answer("pass_kb.py")
    spec = {"loop": {"anvil_url": service, "backend": "cpu", "trials": 2, "retries": 0, "max_turns": 2, **BONUSES,
                     "bdr_reissue_prob": 1.0, "bdr_capacity": 4, "bdr_seed": 7}, "n": 4,
            "steps": [{"groups": [{"uid": "u1", "tag": "g1", "ground_truth": RELU},
                                  {"uid": "u2", "tag": "g2", "ground_truth": RELU}],
                       "answers": {"g1": {"1": wrong, "2": wrong}, "g2": {"1": right}}},
                      {"groups": [{"uid": "u3", "tag": "g3", "ground_truth": softmax}],
                       "answers": {"g1": {"2": right}}}]}
    proc = in_verl(tmp_path, "verl_bdr.py", spec)
    assert proc.returncode == 0, proc.stderr[-4000:]
    first, second = json.loads(proc.stdout)["steps"]
    by_uid = {}
    for o in first["outputs"]:
        by_uid.setdefault(o["uid"], []).append(o)
        assert o["extra_fields"]["anvil_bdr_repair"] == 0  # nothing in the buffer yet
    assert [o["extra_fields"]["anvil_statuses"] for o in by_uid["u1"]] == [["wrong_answer"] * 2] * 4
    assert len({o["worker"] for o in by_uid["u1"]}) == 2  # the group's reports came from both workers
    assert first["stats"] == {"entries": 1, "added": 1, "reissued": 0, "pending_groups": 0, "dropped_groups": 0}
    outputs = second["outputs"]
    assert len(outputs) == 4 and len({o["worker"] for o in outputs}) == 2
    for o in outputs:
        assert o["extra_fields"]["anvil_bdr_repair"] == 1
        # The repair prompt: g1's own prompt, its failed answer, the verifier's feedback, then the model's turn.
        text = o["prompt_text"]
        assert "[task g1]" in text and "[task g3]" not in text
        assert text.index("<|assistant|>") < text.index("Here is the verifier's feedback") < text.rindex(
            "<|assistant|>")
        assert "Wrong answer: 0 of 2" in text and "<|user|>Here is the verifier's feedback" in text
        assert o["extra_fields"]["anvil_statuses"] == ["pass"]  # judged as g1's ReLU task, not g3's softmax
    # The re-issued entry left the buffer; a repair group is never added again.
    assert second["stats"] == {"entries": 0, "added": 1, "reissued": 1, "pending_groups": 0, "dropped_groups": 0}


@pytest.mark.parametrize("name,bdr", [("anvil_repair", 1), ("anvil_repair_eval", 0)])
def test_the_example_agent_loop_file_makes_both_loops(service, tmp_path, name, bdr):
    spec = {"loop": {"anvil_url": service, "backend": "cpu", "trials": 2, "retries": 0},
            "loop_yaml": {"path": str(ROOT / "examples" / "rl" / "verl" / "agent_loop.yaml"), "name": name},
            "ground_truth": RELU, "samples": [[answer("pass_kb.py")]]}
    proc = in_verl(tmp_path, "verl_agent_loop.py", spec)
    assert proc.returncode == 0, proc.stderr[-4000:]
    (s0,) = json.loads(proc.stdout)["outputs"]
    assert s0["extra_fields"]["anvil_statuses"] == ["pass"] and s0["reward_score"] == pytest.approx(1.2)
    assert s0["extra_fields"]["anvil_bdr_repair"] == 0  # no uid here: BDR draws per group
    text = (ROOT / "examples" / "rl" / "verl" / "agent_loop.yaml").read_text()
    entry = text.split(f"- name: {name}\n")[1].split("- name:")[0]
    assert ("bdr_reissue_prob" in entry) == bool(bdr)
