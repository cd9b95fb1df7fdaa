"""verl's custom reward function, answered by anvil's reward service (docs/service.md, "verl").

    reward:
      custom_reward_function:
        path: /path/to/anvil/python/anvil_client/verl.py
        name: compute_score
        reward_kwargs: {anvil_url: "http://127.0.0.1:8000", backend: cuda, candidate_format: kernelbench}

verl awaits `compute_score(data_source, solution_str, ground_truth, extra_info, **reward_kwargs)` for each sample.
`solution_str` is the model's whole answer: the service extracts its code with the model loop's extractor.
`ground_truth` is the task: the sha256 of a task the service holds (POST /v1/tasks), or its text (taken on a
loopback service). Every sample answers the same flat keys, since verl reads every sample's extra info with the
first sample's keys: `score` (the verdict's reward), `anvil_status_code` (anvil_client.STATUS_CODES: 7 no code, 8
cut at the token limit, 9 refused), `anvil_q` (correctness rate), `anvil_speedup` (NaN without one),
`anvil_infra_error` (1: the machine failed, not the candidate; keep the sample out of learning), `anvil_cached`.

reward_kwargs (each also from the environment: $ANVIL_URL, $ANVIL_BACKEND, ...): anvil_url, token_file, backend,
candidate_format, policy, trials, timeout_s (default 280, under verl's 300 s reward timeout: past it the sample
answers flagged as an infra error while its job goes on), max_concurrency (per worker process, default 64), retries
(of a busy service or a failed connection, default 10).
"""

import asyncio
import math
import os
import re
import sys
import weakref
from pathlib import Path

# verl loads this file by its path: the package beside it must be importable.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from anvil_client.client import CONFIG_ERRORS, STATUS_CODES, AsyncClient, ServiceError  # noqa: E402

KEYS = ("score", "anvil_status_code", "anvil_q", "anvil_speedup", "anvil_infra_error", "anvil_cached")
_clients = weakref.WeakKeyDictionary()  # event loop -> {(url, token file): client}


def _setting(kwargs, name, default=None):
    """reward_kwargs[name], else $ANVIL_<NAME> ($ANVIL_URL for anvil_url), else the default."""
    value = kwargs.get(name)
    if value is None:
        env = name.upper() if name.startswith("anvil_") else "ANVIL_" + name.upper()
        value = os.environ.get(env, default)
    return value


def _client(kwargs):
    """One client per event loop and service (its concurrency limit belongs to the loop)."""
    url = _setting(kwargs, "anvil_url", "http://127.0.0.1:8000")
    token_file = _setting(kwargs, "token_file")
    clients = _clients.setdefault(asyncio.get_running_loop(), {})
    if (url, token_file) not in clients:
        clients[(url, token_file)] = AsyncClient(url, token_file=token_file,
                                                 max_concurrency=int(_setting(kwargs, "max_concurrency", 64)),
                                                 retries=int(_setting(kwargs, "retries", 10)))
    return clients[(url, token_file)]


def result(verdict=None, outcome=None, infra=False):
    """The flat keys of one sample: from a verdict, a model's own outcome (no_code, ...), or an infra failure."""
    if verdict is not None:
        status = verdict.get("status", "infra_error")
        perf = verdict.get("gates", {}).get("perf", {}) or {}
        speedup = perf.get("speedup_eager")
        reward = verdict.get("reward")
        return {"score": float(reward) if reward is not None else 0.0,
                "anvil_status_code": STATUS_CODES.get(status, STATUS_CODES["infra_error"]),
                "anvil_q": float(verdict.get("correctness_rate") or 0.0),
                "anvil_speedup": float(speedup) if speedup is not None else math.nan,
                "anvil_infra_error": int(status == "infra_error"),
                "anvil_cached": int(bool(verdict.get("cached")))}
    if outcome is not None:
        return {"score": -1.0, "anvil_status_code": STATUS_CODES.get(outcome, STATUS_CODES["no_code"]),
                "anvil_q": 0.0, "anvil_speedup": math.nan, "anvil_infra_error": 0, "anvil_cached": 0}
    # No verdict: the machine's failure, flagged (never a silent 0), neutral in value.
    return {"score": 0.0, "anvil_status_code": STATUS_CODES["infra_error"], "anvil_q": 0.0,
            "anvil_speedup": math.nan, "anvil_infra_error": 1, "anvil_cached": 0}


def task_fields(ground_truth):
    """The request's task: the sha256 of a task the service holds, or a task's text."""
    task = str(ground_truth)
    return {"task_hash": task} if re.fullmatch(r"[0-9a-f]{64}", task) else {"task_source": task}


async def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    where = task_fields(ground_truth)
    options = {"policy": _setting(kwargs, "policy"), "trials": kwargs.get("trials")}
    try:
        verdict = await _client(kwargs).evaluate(
            None, _setting(kwargs, "candidate_format", "kernelbench"), backend=_setting(kwargs, "backend", "cuda"),
            deadline_s=float(_setting(kwargs, "timeout_s", 280)), wait_past_deadline=False, response=solution_str,
            **where, **options)
    except ServiceError as e:
        if e.status == 422 and e.outcome:
            return result(outcome=e.outcome)
        if e.status in CONFIG_ERRORS:
            raise  # A configuration the user must fix: verl reports it.
        return result(infra=True)
    if verdict is None:
        return result(infra=True)
    return result(verdict)
