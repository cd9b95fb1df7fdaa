"""MirrorPop (MusaCoder §5): drop a whole sequence whose training log-probs stray too far from the rollout's; and the
per-token weights of TIS and IcePop, the corrections trainers ship, to compare it with."""

import math
import numbers

# The rollout engine's log-probs must be those of the distribution it sampled from (temperature, top-p applied):
# vLLM's engine argument `logprobs_mode` gives them as "processed_logprobs"; its default, "raw_logprobs", is the
# model's distribution before the sampling settings, which differs from what was sampled whenever T != 1.
SAMPLED_MODES = ("processed_logprobs",)


def mirror_pop_keep(logp_train, logp_rollout, mask, delta, *, logprobs_mode="processed_logprobs"):
    """Keep the sequence iff the mean over its loss mask of |logp_train - logp_rollout| <= delta (the mean of
    |log rho|, so ratios above and below 1 never cancel). A mask of zeros keeps it (nothing of it is trained on); a
    non-finite log-prob under the mask drops it. `logprobs_mode` names where the rollout's log-probs came from: only
    those of the sampled distribution are accepted."""
    if logprobs_mode not in SAMPLED_MODES:
        raise ValueError(f"rollout log-probs in mode {logprobs_mode!r} are not of the sampled distribution; MirrorPop "
                         "compares against what was sampled: start vLLM with --logprobs-mode processed_logprobs")
    train, rollout, mask = list(logp_train), list(logp_rollout), list(mask)
    if not len(train) == len(rollout) == len(mask):
        raise ValueError(f"logp_train, logp_rollout and mask differ in length: {len(train)}, {len(rollout)}, "
                         f"{len(mask)}")
    if delta < 0:
        raise ValueError(f"delta is a bound >= 0, not {delta}")
    gaps = [abs(float(t) - float(r)) for t, r, m in zip(train, rollout, mask) if m]
    if not gaps:
        return True
    mean = math.fsum(gaps) / len(gaps)
    return math.isfinite(mean) and mean <= delta


def _per_token(ratio, weight):
    if isinstance(ratio, numbers.Real):
        return weight(float(ratio))
    return [weight(float(r)) for r in ratio]


def tis_weight(ratio, cap=2.0):
    """Truncated importance sampling: min(rho, cap), per token; a float or a list, as given."""
    return _per_token(ratio, lambda r: min(r, cap))


def icepop_weight(ratio, low=0.5, high=5.0):
    """IcePop: rho where low <= rho <= high, else 0 (the token leaves the gradient), per token; a float or a list."""
    if low > high:
        raise ValueError(f"icepop's band is empty: low {low} > high {high}")
    return _per_token(ratio, lambda r: r if low <= r <= high else 0.0)
