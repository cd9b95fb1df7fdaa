#!/usr/bin/env bash
# The settings anvil's parts need in a slime GRPO run (docs/rl.md, "slime"; slime at 624b824a); the rest of the
# trainer's configuration (model, data, parallelism) is the lab's. Start `anvil serve` first. Prompts are chat
# messages (--input-key on a messages field, without --apply-chat-template: the rollout renders them), labels the
# task (its sha256 on the service, or its text).
set -euo pipefail
anvil="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
export PYTHONPATH="$anvil/python${PYTHONPATH:+:$PYTHONPATH}"
export ANVIL_URL=${ANVIL_URL:-http://127.0.0.1:8000} ANVIL_BACKEND=${ANVIL_BACKEND:-cuda}
export ANVIL_PRIME_ECHO=0.2,0.1          # ours: PrimeEcho's bonuses for a pass at turn 1 / first at turn 2
export ANVIL_MIRROR_POP_DELTA=0.05       # ours: MirrorPop's bound on a sequence's mean |log ratio|
export ANVIL_BDR_REISSUE_PROB=0.1 ANVIL_BDR_CAPACITY=256 ANVIL_MAX_TURNS=3
python3 train.py \
  --advantage-estimator grpo --n-samples-per-prompt 8 \
  --custom-generate-function-path anvil_client.slime_rollout.custom_generate \
  --rollout-sample-filter-path anvil_client.slime_rollout.drop_infra_samples \
  --custom-reward-post-process-path anvil_client.slime_rollout.grpo_without_infra \
  --use-tis --custom-tis-function-path anvil_client.slime_rollout.mirror_pop_tis \
  --data-source-path anvil_client.slime_rollout.BDRDataSource \
  --rollout-all-samples-process-path anvil_client.slime_rollout.feed_bdr \
  "$@"
