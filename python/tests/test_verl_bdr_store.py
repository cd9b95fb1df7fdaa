"""BDR's store for verl (anvil_client/verl_bdr.py) in one process: groups seen whole from reports of their samples,
one draw per group, repair groups never added again, bounded state. test_verl_agent_loop.py runs it as the Ray actor
the agent loops share, across two workers."""

import asyncio

import pytest

from anvil_client import verl_bdr
from anvil_client.verl_bdr import BDRStore, bdr_store


def verdict(status, feedback="Wrong answer: 0 of 2 trials."):
    return {"schema_version": 2, "status": status, "correctness_rate": 0.0, "gates": {}, "feedback": feedback}


TASK = {"messages": [{"role": "user", "content": "Make it fast."}], "ground_truth": "sha256:abc"}


def test_a_group_becomes_an_entry_when_its_last_sample_reports_and_all_failed():
    store = BDRStore(capacity=4, reissue_prob=1.0, seed=0)
    assert store.report("u", 3, TASK, "code a", verdict("wrong_answer")) is False
    assert store.report("u", 3, TASK, "I refuse.", {"outcome": "refused"}) is False
    assert store.stats()["pending_groups"] == 1 and store.stats()["entries"] == 0
    assert store.report("u", 3, TASK, "code c", verdict("compile_error", "error: x")) is True
    assert store.stats() == {"entries": 1, "added": 1, "reissued": 0, "pending_groups": 0, "dropped_groups": 0}
    entry = store.claim("later")
    assert entry["task"] == TASK and entry["failed_code"] in ("code a", "code c")
    assert entry["messages"][0] == TASK["messages"][0] and entry["messages"][1]["role"] == "assistant"


@pytest.mark.parametrize("last", [verdict("pass"), None, {"schema_version": 2, "status": "infra_error"}])
def test_a_pass_or_the_machines_failure_keeps_the_group_out(last):
    store = BDRStore(capacity=4, reissue_prob=1.0, seed=0)
    store.report("u", 2, TASK, "a", verdict("wrong_answer"))
    assert store.report("u", 2, TASK, "b", last) is False
    assert store.stats()["entries"] == 0 and store.stats()["pending_groups"] == 0


def test_every_sample_of_a_group_gets_the_groups_one_draw():
    store = BDRStore(capacity=4, reissue_prob=1.0, seed=0)
    for uid in ("a", "b"):
        for k in range(2):
            store.report(uid, 2, {**TASK, "ground_truth": uid}, f"{uid}{k}", verdict("wrong_answer"))
    first = [store.claim("x") for _ in range(5)]
    assert all(e is first[0] for e in first) and first[0]["task"]["ground_truth"] == "a"  # the oldest
    assert store.claim("y")["task"]["ground_truth"] == "b"
    assert store.claim("z") is None  # the buffer is empty now
    assert store.claim("x")["task"]["ground_truth"] == "a"  # still the group's own draw
    assert store.stats()["reissued"] == 2


def test_a_repair_group_is_not_added_again():
    store = BDRStore(capacity=4, reissue_prob=1.0, seed=0)
    for k in range(2):
        assert store.report("r", 2, None, f"c{k}", verdict("wrong_answer")) is False
    assert store.stats()["entries"] == 0 and store.stats()["added"] == 0


def test_a_draw_at_probability_zero_never_reissues():
    store = BDRStore(capacity=4, reissue_prob=0.0, seed=0)
    store.report("u", 1, TASK, "a", verdict("wrong_answer"))
    assert all(store.claim(f"g{i}") is None for i in range(100)) and store.stats()["entries"] == 1


def test_groups_that_never_complete_are_dropped_oldest_first(monkeypatch):
    monkeypatch.setattr(verl_bdr, "PENDING", 3)
    store = BDRStore(capacity=4, reissue_prob=1.0, seed=0)
    for i in range(5):
        store.report(f"g{i}", 2, TASK, "a", verdict("wrong_answer"))
    assert store.stats()["pending_groups"] == 3 and store.stats()["dropped_groups"] == 2
    assert store.report("g4", 2, TASK, "b", verdict("wrong_answer")) is True  # the newest still completes
    store.report("g0", 2, TASK, "b", verdict("wrong_answer"))  # its first report is gone: it starts again
    assert store.stats()["pending_groups"] == 3 and store.stats()["entries"] == 1


def test_outside_ray_the_process_has_one_store_per_settings():
    async def go():
        a, b = bdr_store(8, 1.0, 3), bdr_store(8, 1.0, 3)
        assert a is b and bdr_store(8, 0.5, 3) is not a
        await a.report("u", 1, TASK, "x", verdict("wrong_answer"))
        return await b.claim("v")

    assert asyncio.run(go())["failed_code"] == "x"
