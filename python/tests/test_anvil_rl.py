"""anvil_rl's functions against values worked by hand (docs/rl.md has the formulas), and their edges: empty groups,
all-equal rewards, masks of zeros, None everywhere."""

import math

import numpy as np
import pytest

from anvil_rl import (BDRBuffer, grpo_advantages, icepop_weight, mirror_pop_keep, prime_echo, prime_echo_loss_mask,
                      repair_message, reward, tis_weight)


def verdict(status, q=None, eager=None, compile_=None, feedback=None):
    v = {"schema_version": 2, "status": status, "correctness_rate": 1.0 if q is None else q, "gates": {}}
    if eager is not None or compile_ is not None:
        v["gates"]["perf"] = {k: s for k, s in (("speedup_eager", eager), ("speedup_compile", compile_)) if s}
    if feedback is not None:
        v["feedback"] = feedback
    return v


# reward: eq. 2


def test_reward_of_a_pass_grows_with_its_speedup_and_stops_at_nu_max():
    assert reward(verdict("pass", eager=3.0)) == 2.0                      # 1 + 0.5 * (3 - 1)
    assert reward(verdict("pass", eager=0.4)) == 1.0                      # slower than eager: no penalty
    assert reward(verdict("pass", eager=9.0)) == 3.0                      # 1 + 0.5 * min(8, 4)
    assert reward(verdict("pass", eager=9.0), lam=0.25, nu_max=2.0) == 1.5
    assert reward(verdict("pass", eager=3.0, compile_=1.5), vs="compile") == 1.25
    assert reward(verdict("pass")) == 1.0                                 # perf off: nu = 1
    assert reward(verdict("pass", eager=float("nan"))) == 1.0
    assert reward(verdict("pass", eager=2.0), vs="compile") == 1.0        # no speedup against compile


def test_reward_of_failures_and_of_the_machine():
    assert reward(verdict("wrong_answer", q=0.6)) == pytest.approx(-0.2)  # -0.5 + 0.5 * 0.6
    assert reward(verdict("wrong_answer", q=0.0)) == -1.0
    for status in ("compile_error", "runtime_error", "timeout", "cheat"):
        assert reward(verdict(status, q=0.0)) == -1.0
    for outcome in ("no_code", "truncated", "refused"):
        assert reward({"outcome": outcome}) == -1.0
    assert reward(verdict("infra_error")) is None
    assert reward({"outcome": "server_error"}) is None
    # A run's attempt (anvil_runs): the outcome, and the verdict beside it.
    assert reward({"outcome": "pass", "verdict": verdict("pass", eager=2.0)}) == 1.5


def test_reward_refuses_what_is_not_a_verdict():
    with pytest.raises(ValueError, match="unknown verdict status 'passed'"):
        reward({"status": "passed"})
    with pytest.raises(ValueError, match="needs `status`"):
        reward({"score": 1})
    with pytest.raises(TypeError):
        reward("pass")
    with pytest.raises(ValueError, match="vs is"):
        reward(verdict("pass"), vs="inductor")


# PrimeEcho


def test_prime_echo_anchors_on_the_first_turn_and_adds_the_early_bonus():
    b = dict(bonus_first=0.2, bonus_second=0.1)
    assert prime_echo([1.5], **b) == pytest.approx(0.75 * 1.5 + 0.25 * 1.5 + 0.2)           # 1.7
    assert prime_echo([-1.0, 2.0], **b) == pytest.approx(-0.75 + 0.5 + 0.1)                 # -0.15
    assert prime_echo([-1.0, -0.2, 1.0], **b) == pytest.approx(-0.75 + 0.25)                # turn 3: no bonus
    assert prime_echo([-1.0, -1.0, -1.0], **b) == -1.0
    assert prime_echo([-0.5, -0.25], alpha=0.5, **b) == pytest.approx(-0.25 - 0.125)
    assert prime_echo([1.0, 2.0], alpha=1.0, **b) == pytest.approx(1.2)                     # turn 1 passed
    assert prime_echo([-1.0, None], **b) is None
    assert prime_echo([None], **b) is None


def test_prime_echo_has_no_default_bonus_and_refuses_nonsense():
    with pytest.raises(TypeError):
        prime_echo([1.0])
    with pytest.raises(ValueError, match="at least one"):
        prime_echo([], bonus_first=0.2, bonus_second=0.1)
    with pytest.raises(ValueError, match="alpha"):
        prime_echo([1.0], alpha=1.5, bonus_first=0.2, bonus_second=0.1)


def test_prime_echo_loss_mask_is_one_on_the_first_response_only():
    assert prime_echo_loss_mask([("env", 2), ("response", 3), ("env", 2), ("response", 2)]) == [0, 0, 1, 1, 1, 0, 0,
                                                                                                0, 0]
    assert prime_echo_loss_mask([("response", 2)]) == [1, 1]
    assert prime_echo_loss_mask([("env", 3)]) == [0, 0, 0]
    assert prime_echo_loss_mask([]) == []
    assert prime_echo_loss_mask([("response", 0), ("env", 1), ("response", 2)]) == [0, 0, 0]
    for bad, says in (([("tool", 2)],), "kind 'tool'"), (([("env", -1)],), "tokens"), (([("env",)],), "segment 0"):
        with pytest.raises(ValueError, match=says):
            prime_echo_loss_mask(*bad)


# GRPO


def test_grpo_advantages_by_hand():
    # mean 0, unbiased std sqrt((1 + 1 + 0) / 2) = 1.
    assert grpo_advantages([1.0, -1.0, 0.0], eps=0.0) == [1.0, -1.0, 0.0]
    a = grpo_advantages([2.0, -1.0, None, -1.0])  # mean 0, std sqrt((4 + 1 + 1) / 2) = sqrt(3)
    assert a[2] is None
    assert a[0] == pytest.approx(2 / (math.sqrt(3) + 1e-6)) and a[1] == a[3] == pytest.approx(-1 / (math.sqrt(3) + 1e-6))
    torch = pytest.importorskip("torch")
    r = torch.tensor([1.7, -0.15, -1.0, 0.4, 2.3])
    want = ((r - r.mean()) / (r.std() + 1e-6)).tolist()
    assert grpo_advantages(r.tolist()) == pytest.approx(want, rel=1e-5)


def test_grpo_advantages_edges():
    assert grpo_advantages([]) == []
    assert grpo_advantages([None, None]) == [None, None]
    assert grpo_advantages([0.5]) == [0.0]               # one valid reward: no signal
    assert grpo_advantages([None, 0.5, None]) == [None, 0.0, None]
    assert grpo_advantages([-1.0] * 8) == [0.0] * 8     # all equal
    assert grpo_advantages(np.array([1.0, 3.0])) == pytest.approx([-1 / (math.sqrt(2) + 1e-6), 1 / (math.sqrt(2) + 1e-6)])
    with pytest.raises(ValueError, match="not finite"):
        grpo_advantages([1.0, float("nan")])


# MirrorPop, TIS, IcePop


def test_mirror_pop_keeps_by_the_mean_absolute_log_ratio_under_the_mask():
    train, rollout = [-1.0, -2.0, -0.5, -3.0], [-1.2, -1.8, -0.5, -9.0]
    # Under the mask [1, 1, 1, 0]: |0.2|, |0.2|, 0 -> mean 0.1333; the unmasked token's gap of 6 does not count.
    assert mirror_pop_keep(train, rollout, [1, 1, 1, 0], delta=0.14)
    assert not mirror_pop_keep(train, rollout, [1, 1, 1, 0], delta=0.13)
    assert not mirror_pop_keep(train, rollout, [1, 1, 1, 1], delta=1.0)  # mean 1.6
    # Ratios above and below 1 do not cancel: signed mean 0, absolute 0.5.
    assert not mirror_pop_keep([-1.0, -1.0], [-1.5, -0.5], [1, 1], delta=0.4)
    assert mirror_pop_keep(train, rollout, [0, 0, 0, 0], delta=0.0)     # nothing trained on
    assert mirror_pop_keep([], [], [], delta=0.0)
    assert mirror_pop_keep(np.array(train), np.array(rollout), np.array([1, 1, 1, 0]), delta=0.14)
    assert not mirror_pop_keep([-1.0, float("-inf")], [-1.0, -2.0], [1, 1], delta=10.0)
    assert mirror_pop_keep([-1.0, float("-inf")], [-1.0, -2.0], [1, 0], delta=0.0)


def test_mirror_pop_refuses_raw_log_probs_and_mismatched_lengths():
    with pytest.raises(ValueError, match="processed_logprobs"):
        mirror_pop_keep([-1.0], [-1.0], [1], 0.1, logprobs_mode="raw_logprobs")
    with pytest.raises(ValueError, match="length"):
        mirror_pop_keep([-1.0, -2.0], [-1.0], [1, 1], 0.1)
    with pytest.raises(ValueError, match="delta"):
        mirror_pop_keep([-1.0], [-1.0], [1], -0.1)


def test_tis_and_icepop_weights_per_token():
    assert tis_weight(3.0) == 2.0 and tis_weight(0.5) == 0.5 and tis_weight(3.0, cap=5.0) == 3.0
    assert tis_weight([0.1, 1.0, 2.5]) == [0.1, 1.0, 2.0]
    assert icepop_weight(0.4) == 0.0 and icepop_weight(0.5) == 0.5 and icepop_weight(5.0) == 5.0
    assert icepop_weight(5.1) == 0.0
    assert icepop_weight([0.4, 1.2, 6.0], low=0.8, high=2.0) == [0.0, 1.2, 0.0]
    assert icepop_weight(np.float32(1.5)) == 1.5 and tis_weight(np.array([3.0])) == [2.0]
    assert tis_weight([]) == [] and icepop_weight([]) == []
    with pytest.raises(ValueError, match="band"):
        icepop_weight(1.0, low=2.0, high=1.0)


# BDR


TASK = {"name": "19_ReLU", "messages": [{"role": "system", "content": "You write kernels."},
                                        {"role": "user", "content": "Make relu fast."}]}


def test_bdr_keeps_only_groups_where_every_sample_failed_by_its_own_doing():
    buf = BDRBuffer(capacity=4, reissue_prob=1.0, seed=0)
    assert not buf.add_group(TASK, ["a", "b"], [verdict("pass"), verdict("runtime_error", q=0)])
    assert not buf.add_group(TASK, ["a", "b"], [verdict("infra_error"), verdict("runtime_error", q=0)])
    assert not buf.add_group(TASK, ["a"], [{"outcome": "server_error"}])
    assert not buf.add_group(TASK, [], [])
    assert len(buf) == 0
    wrong = verdict("wrong_answer", q=0.5, feedback="Wrong answer: 2 of 4 trials differ.\n")
    assert buf.add_group(TASK, ["crash", "close", "empty"],
                         [verdict("runtime_error", q=0, feedback="It crashed."), wrong, {"outcome": "no_code"}])
    (entry,) = buf.next_repair_prompts(1)
    assert entry["task"] is TASK and entry["failed_code"] == "close"  # the best: -0.25 over -1 and -1
    assert entry["feedback"] == "Wrong answer: 2 of 4 trials differ.\n"
    assert entry["messages"] == TASK["messages"] + [
        {"role": "assistant", "content": "close"},
        {"role": "user", "content": "Here is the verifier's feedback on your last answer:\n\nWrong answer: 2 of 4 "
                                    "trials differ.\n\nAnswer with the complete, corrected file in one fenced code "
                                    "block."}]
    with pytest.raises(ValueError, match="2 samples but 1 verdicts"):
        buf.add_group(TASK, ["a", "b"], [wrong])


def test_bdr_is_a_bounded_fifo_and_its_draws_are_seeded():
    def filled(seed, p, capacity=3):
        buf = BDRBuffer(capacity=capacity, reissue_prob=p, seed=seed)
        for i in range(5):
            buf.add_group(f"prompt {i}", [f"code {i}"], [verdict("compile_error", q=0)])
        return buf

    buf = filled(0, 1.0)
    assert len(buf) == 3  # prompts 0 and 1 fell out
    got = buf.next_repair_prompts(2)
    assert [e["failed_code"] for e in got] == ["code 2", "code 3"] and len(buf) == 1
    assert got[0]["messages"][0] == {"role": "user", "content": "prompt 2"}
    assert [e["failed_code"] for e in buf.next_repair_prompts(5)] == ["code 4"]
    assert buf.next_repair_prompts(3) == []
    assert filled(0, 0.0).next_repair_prompts(10) == []
    # p = 0.5: the same seed draws the same entries; the draws are Random(seed).random() < p.
    import random
    r = random.Random(7)
    expected = min(3, sum(r.random() < 0.5 for _ in range(4)))
    a, b = filled(7, 0.5).next_repair_prompts(4), filled(7, 0.5).next_repair_prompts(4)
    assert a == b and len(a) == expected


def test_bdr_refuses_nonsense():
    with pytest.raises(ValueError, match="capacity"):
        BDRBuffer(capacity=0, reissue_prob=0.1, seed=0)
    with pytest.raises(ValueError, match="reissue_prob"):
        BDRBuffer(capacity=1, reissue_prob=1.5, seed=0)
    with pytest.raises(ValueError, match="a task is its prompt"):
        BDRBuffer(1, 0.1, 0).add_group({"name": "x"}, ["a"], [verdict("timeout", q=0)])


def test_repair_messages_for_the_models_own_failures():
    assert repair_message({"outcome": "no_code"}).startswith("Your answer had no code block")
    assert "cut off at the token limit" in repair_message({"outcome": "truncated"})
    assert repair_message(verdict("timeout", q=0)) == ("Here is the verifier's feedback on your last answer:\n\nThe "
                                                       "verdict was timeout.\n\nAnswer with the complete, corrected "
                                                       "file in one fenced code block.")
    with pytest.raises(ValueError, match="passing"):
        repair_message(verdict("pass"))
