"""What the multi-turn rollouts share (verl_agent_loop, slime_rollout): one answer judged by anvil's reward service,
and PrimeEcho's settings. Settings come as a dict (a trainer's config), else from the environment as
anvil_client.verl reads them ($ANVIL_URL, $ANVIL_BACKEND, ...)."""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from anvil_client.client import CONFIG_ERRORS, ServiceError  # noqa: E402
from anvil_client.verl import _client, _setting, task_fields  # noqa: E402
from anvil_rl import prime_echo, repair_message, reward  # noqa: E402


async def judge(settings, answer, ground_truth):
    """The verdict (a dict) of one model answer, {"outcome": ...} for the model's own failures (no code, cut off,
    refused), or None when the machine failed (an unreachable service, a verdict later than timeout_s). A
    configuration the user must fix (a bad token, a malformed request) raises."""
    try:
        return await _client(settings).evaluate(
            None, _setting(settings, "candidate_format", "kernelbench"), backend=_setting(settings, "backend", "cuda"),
            deadline_s=float(_setting(settings, "timeout_s", 280)), wait_past_deadline=False, response=answer,
            policy=_setting(settings, "policy"), trials=settings.get("trials"), **task_fields(ground_truth))
    except ServiceError as e:
        if e.status == 422 and e.outcome:
            return {"outcome": e.outcome}
        if e.status in CONFIG_ERRORS:
            raise
        return None  # No service (status 0), or its own failure: the machine's.


def prime_echo_settings(settings):
    """(alpha, bonus_first, bonus_second) from settings, else $ANVIL_PRIME_ECHO ("B1,B2") and $ANVIL_PRIME_ECHO_ALPHA.
    The bonuses have no default (the paper gives no values): missing ones are an error."""
    b1, b2 = settings.get("bonus_first"), settings.get("bonus_second")
    if b1 is None or b2 is None:
        text = os.environ.get("ANVIL_PRIME_ECHO", "")
        try:
            b1, b2 = (float(x) for x in text.split(","))
        except ValueError:
            raise ValueError("set PrimeEcho's bonuses: bonus_first and bonus_second in the config, or "
                             f"ANVIL_PRIME_ECHO=B1,B2 (e.g. 0.2,0.1; the paper gives no values), not {text!r}") from None
    alpha = float(settings.get("alpha", os.environ.get("ANVIL_PRIME_ECHO_ALPHA", 0.75)))
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"PrimeEcho's alpha is a weight in [0, 1], not {alpha}")
    return alpha, float(b1), float(b2)


class Trajectory:
    """One sample's turns so far: each verdict's status (or the model's outcome) and reward. The machine's failure
    ends it and leaves it without a score."""

    def __init__(self):
        self.statuses, self.rewards, self.infra = [], [], False

    def add(self, verdict):
        """Records a turn's verdict (judge()'s answer); whether another turn may follow (no pass, no machine
        failure)."""
        if verdict is None or reward(verdict) is None:
            self.infra = True
            self.statuses.append("infra_error")
            self.rewards.append(None)
            return False
        self.statuses.append(verdict.get("status") or verdict["outcome"])
        self.rewards.append(reward(verdict))
        return self.statuses[-1] != "pass"

    def score(self, alpha, bonus_first, bonus_second):
        return prime_echo(self.rewards, alpha, bonus_first=bonus_first, bonus_second=bonus_second)


def repaired(messages, answer, verdict):
    """(the conversation with the model's answer, and with the repair request after it)."""
    answered = messages + [{"role": "assistant", "content": answer}]
    return answered, answered + [{"role": "user", "content": repair_message(verdict)}]


def mirror_pop_kept(log_ratio, mask, delta):
    """MirrorPop over a batch on the training path (anvil_rl.mirror_pop_keep's rule, in torch): (batch,) bools, the
    rows whose mean over their mask of |log_ratio| is at most delta; a row with no masked token keeps, a non-finite
    ratio under the mask drops."""
    import torch

    mask = mask.to(torch.float64)
    gaps = torch.where(mask > 0, log_ratio.to(torch.float64).abs(), torch.zeros_like(mask))  # padding: no gap
    tokens = mask.sum(dim=-1)
    mean = gaps.sum(dim=-1) / tokens.clamp(min=1)
    return (tokens == 0) | (mean <= delta)


def mirror_pop_delta():
    """MirrorPop's δ from $ANVIL_MIRROR_POP_DELTA (no default: the paper gives none)."""
    text = os.environ.get("ANVIL_MIRROR_POP_DELTA")
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise ValueError("set ANVIL_MIRROR_POP_DELTA to MirrorPop's bound on a sequence's mean |log ratio| (e.g. "
                         f"0.05); it is {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise ValueError(f"ANVIL_MIRROR_POP_DELTA is a finite bound >= 0, not {text}")
    return value
