"""GRPO's group-relative advantages, with the machine's failures left out of the group."""

import math


def grpo_advantages(rewards, eps=1e-6):
    """(r - mean) / (std + eps) for each reward of one group (the samples of one prompt), mean and std over the
    rewards that are not None, std unbiased (n - 1, as torch.std). None stays None (the trainer masks that sample).
    A group with one reward gets 0.0 (verl gives r / (1 + eps), slime NaN: docs/rl.md); all-equal rewards get 0.0."""
    rewards = list(rewards)
    valid = [float(r) for r in rewards if r is not None]
    if any(not math.isfinite(r) for r in valid):
        raise ValueError(f"a reward is not finite: {rewards}")
    if len(valid) < 2:
        return [None if r is None else 0.0 for r in rewards]
    mean = math.fsum(valid) / len(valid)
    std = math.sqrt(math.fsum((r - mean) ** 2 for r in valid) / (len(valid) - 1))
    return [None if r is None else (float(r) - mean) / (std + eps) for r in rewards]
