"""anvil's advantage estimator and MirrorPop policy loss for verl 0.9.1 (docs/rl.md, "verl"), registered by name
when verl imports this module: `VERL_USE_EXTERNAL_MODULES=anvil_client.verl_algos` (with anvil's python/ folder on
PYTHONPATH), then

    algorithm.adv_estimator=anvil_grpo
    actor_rollout_ref.actor.policy_loss.loss_mode=anvil_mirror_pop     # and ANVIL_MIRROR_POP_DELTA=0.05, say

- `anvil_grpo`: GRPO's group-relative advantages (anvil_rl.grpo_advantages) with the machine's failures left out: a
  row whose response_mask is all zero (the agent loop's mark of an infra sample) takes no part in its group's mean
  and std and gets advantage 0; a group left with one reward gives 0.
- `anvil_mirror_pop`: verl's PPO-clip loss (its `vanilla`) over the sequences MirrorPop keeps: a sequence whose mean
  over its response mask of |log(pi_train / pi_rollout)| exceeds delta leaves the loss whole (anvil_rl.mirror_pop_keep).
  The per-token ratios are verl's rollout-correction weights, which the loss receives: set
  `algorithm.rollout_correction.rollout_is=token` with `rollout_is_threshold` far above any ratio (1e6: a ratio
  truncated at 2 would hide the gap), and keep the rollout's `logprobs_mode: processed_logprobs` (verl's default;
  vLLM's own default, raw_logprobs, is not the sampled distribution). verl's own `rollout_rs` modes are means of the
  signed or squared log ratio, not this filter. The IS weights only measure the gap here: they do not reweight the
  loss."""

import sys
from collections import defaultdict
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from anvil_client.turns import mirror_pop_delta, mirror_pop_kept  # noqa: E402
from anvil_rl import grpo_advantages  # noqa: E402
from verl.trainer.ppo.core_algos import (compute_policy_loss_vanilla, register_adv_est,  # noqa: E402
                                         register_policy_loss)


@register_adv_est("anvil_grpo")
def compute_anvil_grpo_advantage(token_level_rewards, response_mask, index, epsilon=1e-6, config=None, **kwargs):
    """(advantages, returns), each (batch, response_length): the row's group-relative advantage on its masked
    tokens."""
    scores = token_level_rewards.sum(dim=-1)
    valid = response_mask.sum(dim=-1) > 0
    rows = defaultdict(list)
    for i in range(scores.shape[0]):
        rows[index[i]].append(i)
    advantages = torch.zeros_like(scores)
    with torch.no_grad():
        for members in rows.values():
            group = grpo_advantages([float(scores[i]) if valid[i] else None for i in members], eps=epsilon)
            for i, a in zip(members, group):
                advantages[i] = 0.0 if a is None else a
    advantages = advantages.unsqueeze(-1) * response_mask
    return advantages, advantages


@register_policy_loss("anvil_mirror_pop")
def compute_policy_loss_mirror_pop(old_log_prob, log_prob, advantages, response_mask, loss_agg_mode="token-mean",
                                   config=None, rollout_is_weights=None):
    if rollout_is_weights is None:
        raise ValueError("anvil_mirror_pop needs the rollout's log-probs as verl's rollout-correction weights: set "
                         "algorithm.rollout_correction.rollout_is=token and rollout_is_threshold=1e6")
    # log(0) on padding: masked out.
    kept = mirror_pop_kept(torch.log(rollout_is_weights), response_mask, mirror_pop_delta())
    mask = response_mask * kept.unsqueeze(-1).to(response_mask.dtype)
    loss, metrics = compute_policy_loss_vanilla(old_log_prob, log_prob, advantages, mask, loss_agg_mode, config, None)
    metrics["actor/anvil_mirror_pop_dropped"] = float((~kept).float().mean())
    return loss, metrics
