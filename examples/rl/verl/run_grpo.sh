#!/usr/bin/env bash
# The settings anvil's parts need in a verl 0.9.1 GRPO run (docs/rl.md, "verl"); the rest of the trainer's
# configuration (model, data, parallelism) is the lab's. Start `anvil serve` first; its URL is in agent_loop.yaml.
# Training rows name `agent_name: anvil_repair` (the loop with BDR); validation rows take the default below.
set -euo pipefail
anvil="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
export PYTHONPATH="$anvil/python${PYTHONPATH:+:$PYTHONPATH}"
export VERL_USE_EXTERNAL_MODULES=anvil_client.verl_algos   # registers anvil_grpo and anvil_mirror_pop
export ANVIL_MIRROR_POP_DELTA=0.05                         # ours: MirrorPop's bound on a sequence's mean |log ratio|
python3 -m verl.trainer.main_ppo \
  algorithm.adv_estimator=anvil_grpo \
  actor_rollout_ref.actor.policy_loss.loss_mode=anvil_mirror_pop \
  algorithm.rollout_correction.rollout_is=token \
  algorithm.rollout_correction.rollout_is_threshold=1e6 \
  actor_rollout_ref.rollout.calculate_log_probs=true \
  actor_rollout_ref.rollout.logprobs_mode=processed_logprobs \
  actor_rollout_ref.rollout.n=8 \
  actor_rollout_ref.rollout.agent.agent_loop_config_path="$anvil/examples/rl/verl/agent_loop.yaml" \
  actor_rollout_ref.rollout.agent.default_agent_loop=anvil_repair_eval \
  "$@"
