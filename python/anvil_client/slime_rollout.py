"""slime's multi-turn kernel rollout and the hooks around it (docs/rl.md, "slime"), written against slime at
624b824a (2026-08-21):

    --custom-generate-function-path anvil_client.slime_rollout.custom_generate
    --rollout-sample-filter-path anvil_client.slime_rollout.drop_infra_samples
    --custom-reward-post-process-path anvil_client.slime_rollout.grpo_without_infra
    --use-tis --custom-tis-function-path anvil_client.slime_rollout.mirror_pop_tis      (and ANVIL_MIRROR_POP_DELTA)
    --data-source-path anvil_client.slime_rollout.BDRDataSource
    --rollout-all-samples-process-path anvil_client.slime_rollout.feed_bdr

with anvil's python/ folder on PYTHONPATH, and no --custom-rm-path: the rollout sets each sample's reward itself.

- `custom_generate`: generate through the router's `/generate` (token ids in, tokens and their log-probs out) →
  judge through `anvil serve` (`sample.label` names the task: a sha256 the service holds, or the task's text) → the
  model loop's repair request (anvil_rl.repair_message) as the next user turn → generate again, up to
  $ANVIL_MAX_TURNS (3) turns, stopping at the first pass. Tokens go in through slime's own
  `Sample.append_response_tokens`: the first answer trainable (its log-probs kept), every later answer and every
  repair request not. The reward is PrimeEcho's over the turns. $ANVIL_TRAIN_ON=first_turn (the default) keeps the
  prompt and the first answer alone (the same loss under causal attention, at a third of the tokens);
  `trajectory` keeps every turn. A sample the machine failed gets an all-zero loss mask, reward 0.0 and
  `metadata["anvil_infra_error"] = 1`.
- `drop_infra_samples` sets `remove_sample` on those; `grpo_without_infra` gives GRPO's group advantages with them
  left out of their group's statistics (anvil_rl.grpo_advantages).
- `mirror_pop_tis`: MirrorPop as slime's TIS hook: a sample whose mean over its loss mask of |train − rollout|
  log-prob exceeds δ ($ANVIL_MIRROR_POP_DELTA) gets a zero loss mask (slime rebuilds its loss reducer from the masks
  this returns); the others are left as they are, unweighted. Per sample as slime hands it over: with context
  parallelism, per shard.
- `BDRDataSource` (slime's `RolloutDataSourceWithBuffer` plus anvil_rl.BDRBuffer): each batch, every group drawn
  may be a repair task re-issued from the buffer ($ANVIL_BDR_REISSUE_PROB, 0.1; $ANVIL_BDR_CAPACITY, 256; seeded
  by slime's --seed); `feed_bdr` (slime's all-samples hook) adds the groups whose every trajectory failed.

Settings from the environment (slime's args hold none of ours): $ANVIL_URL, $ANVIL_TOKEN_FILE, $ANVIL_BACKEND,
$ANVIL_CANDIDATE_FORMAT, $ANVIL_POLICY, $ANVIL_TIMEOUT_S (280), $ANVIL_PRIME_ECHO ("B1,B2": required, the paper
gives no values), $ANVIL_PRIME_ECHO_ALPHA (0.75), $ANVIL_MAX_TURNS, $ANVIL_TRAIN_ON."""

import copy
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from anvil_client.turns import (Trajectory, judge, mirror_pop_delta, mirror_pop_kept, prime_echo_settings,  # noqa: E402
                                repaired)
from anvil_rl import BDRBuffer, grpo_advantages  # noqa: E402

TRAIN_ON = ("first_turn", "trajectory")


def _messages(prompt):
    if isinstance(prompt, str):
        return [{"role": "user", "content": prompt}]
    return [dict(m) for m in prompt]


def _template(tokenizer, messages, generation_prompt):
    return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=generation_prompt)


def _env_tokens(tokenizer, answered, following):
    """The tokens of what follows the model's answer: the template's rendering of the repair request and the next
    generation prompt, as the difference of the two conversations' texts."""
    before, after = _template(tokenizer, answered, False), _template(tokenizer, following, True)
    if not after.startswith(before):
        raise ValueError("the chat template renders an earlier conversation differently once a turn is added; "
                         "anvil's slime rollout needs a template that only appends")
    text = after[len(before):]
    return text, tokenizer(text, add_special_tokens=False)["input_ids"]


def _cut_to_first_answer(sample, prompt_length, first_length, first_text):
    sample.tokens = sample.tokens[:prompt_length + first_length]
    sample.response_length = first_length
    sample.response = first_text
    sample.loss_mask = sample.loss_mask[:first_length]
    if sample.rollout_log_probs is not None:
        sample.rollout_log_probs = sample.rollout_log_probs[:first_length]
    offsets = getattr(sample, "rollout_top_p_token_offsets", None)
    if offsets is not None:  # slime's top-p replay: spans of the kept answer's tokens only.
        offsets = list(offsets)[:first_length + 1]
        sample.rollout_top_p_token_offsets = offsets
        sample.rollout_top_p_token_ids = list(sample.rollout_top_p_token_ids)[:int(offsets[-1])]


async def custom_generate(args, sample, sampling_params, evaluation=False):
    from slime.rollout.sglang_rollout import GenerateState
    from slime.utils.http_utils import post

    settings = {}
    alpha, bonus_first, bonus_second = prime_echo_settings(settings)
    max_turns = int(os.environ.get("ANVIL_MAX_TURNS", 3))
    train_on = os.environ.get("ANVIL_TRAIN_ON", "first_turn")
    if train_on not in TRAIN_ON:
        raise ValueError(f"ANVIL_TRAIN_ON is one of {TRAIN_ON}, not {train_on!r}")
    tokenizer = GenerateState(args).tokenizer
    url = f"http://{args.sglang_router_ip}:{args.sglang_router_port}/generate"
    Status = type(sample).Status

    messages = _messages(sample.prompt)
    prompt_ids = tokenizer(_template(tokenizer, messages, True), add_special_tokens=False)["input_ids"]
    sample.tokens, sample.response, sample.response_length = list(prompt_ids), "", 0
    sample.loss_mask, sample.rollout_log_probs = None, None
    turns, first_length, first_text, last = Trajectory(), 0, "", None
    finish = "stop"
    for turn in range(1, max_turns + 1):
        output = await post(url, {"input_ids": sample.tokens, "sampling_params": sampling_params,
                                  "return_logprob": True})
        meta = output["meta_info"]
        finish = meta["finish_reason"]["type"]
        if finish == "abort":
            sample.status = Status.ABORTED
            return sample
        pairs = meta["output_token_logprobs"]  # [(log-prob, token id, ...)] per generated token
        ids, logps = [p[1] for p in pairs], [p[0] for p in pairs]
        answer = output["text"]
        first = turn == 1
        sample.append_response_tokens(args, tokens=ids, log_probs=logps if first else None, trainable=first,
                                      meta_info=meta if first else None, text=answer)
        if first:
            first_length, first_text = sample.response_length, answer
        verdict = await judge(settings, answer, sample.label)
        last = (answer, verdict)
        if not turns.add(verdict) or turn == max_turns or finish == "length":
            break
        answered, following = repaired(messages, answer, verdict)
        text, env_ids = _env_tokens(tokenizer, answered, following)
        sample.append_response_tokens(args, tokens=env_ids, trainable=False, text=text)
        messages = following

    if train_on == "first_turn":
        _cut_to_first_answer(sample, len(prompt_ids), first_length, first_text)
    score = turns.score(alpha, bonus_first, bonus_second)
    if turns.infra:
        sample.loss_mask = [0] * sample.response_length  # The machine's failure: nothing to learn from.
    sample.reward = 0.0 if score is None else score
    sample.status = Status.TRUNCATED if finish == "length" else Status.COMPLETED
    sample.metadata = {**(sample.metadata or {}), "anvil_turn_rewards": turns.rewards,
                       "anvil_statuses": turns.statuses, "anvil_prime_echo": score,
                       "anvil_infra_error": int(turns.infra),
                       "anvil_last_answer": last[0] if last else "",
                       "anvil_last_verdict": last[1] if last and last[1] is not None else {"status": "infra_error"}}
    return sample


def _infra(sample):
    return bool((sample.metadata or {}).get("anvil_infra_error"))


def _flat(samples):
    for s in samples:
        if isinstance(s, list):
            yield from _flat(s)
        else:
            yield s


def drop_infra_samples(args, samples):
    """slime's rollout-sample filter: the machine's failures take no part in the loss."""
    for s in _flat(samples):
        if _infra(s):
            s.remove_sample = True


def grpo_without_infra(args, samples):
    """slime's reward post-process: (raw rewards, GRPO advantages), groups by `group_index` (slime's: the samples of
    one prompt), the machine's failures out of their group's mean and std with advantage 0."""
    samples = list(_flat(samples))
    raw = [s.get_reward_value(args) for s in samples]
    groups = {}
    for i, s in enumerate(samples):
        groups.setdefault(s.group_index if s.group_index is not None else i // args.n_samples_per_prompt, []).append(i)
    advantages = [0.0] * len(samples)
    for members in groups.values():
        values = grpo_advantages([None if _infra(samples[i]) else raw[i] for i in members])
        for i, a in zip(members, values):
            advantages[i] = 0.0 if a is None else a
    return raw, advantages


def mirror_pop_tis(args, *, pg_loss, train_log_probs, rollout_log_probs, loss_masks, **kwargs):
    """slime's custom TIS hook: (pg_loss, the loss masks with MirrorPop's dropped samples zeroed, metrics)."""
    import torch

    delta = mirror_pop_delta()
    masks, dropped = [], []
    for train, rollout, mask in zip(train_log_probs, rollout_log_probs, loss_masks):
        keep = bool(mirror_pop_kept((train - rollout).detach().unsqueeze(0), mask.detach().unsqueeze(0), delta)[0])
        masks.append(mask if keep else torch.zeros_like(mask))
        dropped.append(torch.full_like(train, 0.0 if keep else 1.0, dtype=torch.float32))
    metrics = {"anvil_mirror_pop_dropped": torch.cat(dropped).detach() if dropped else torch.zeros(0)}
    return pg_loss, masks, metrics


def _data_source_base():
    from slime.rollout.data_source import RolloutDataSourceWithBuffer

    return RolloutDataSourceWithBuffer


class BDRDataSource:
    """Made by slime from --data-source-path: slime's RolloutDataSourceWithBuffer, with BDR's repair tasks among the
    groups it hands out (a subclass made at first use, so that this module imports without slime)."""

    def __new__(cls, args):
        base = _data_source_base()

        class _BDRDataSource(base):
            def __init__(self, args):
                super().__init__(args)
                self.bdr = BDRBuffer(capacity=int(os.environ.get("ANVIL_BDR_CAPACITY", 256)),
                                     reissue_prob=float(os.environ.get("ANVIL_BDR_REISSUE_PROB", 0.1)),
                                     seed=getattr(args, "seed", 0))

            def get_samples(self, num_samples):
                from slime.utils.types import Sample

                repairs = self.bdr.next_repair_prompts(num_samples)
                groups = []
                for entry in repairs:
                    group = []
                    for _ in range(self.args.n_samples_per_prompt):
                        s = Sample(prompt=copy.deepcopy(entry["messages"]), label=entry["task"]["label"],
                                   metadata={"anvil_bdr_repair": True})
                        s.group_index, s.index = self.sample_group_index, self.sample_index
                        self.sample_index += 1
                        group.append(s)
                    self.sample_group_index += 1
                    groups.append(group)
                if num_samples > len(groups):
                    groups += super().get_samples(num_samples - len(groups))
                return groups

        return _BDRDataSource(args)


def feed_bdr(args, all_samples, data_source):
    """slime's all-samples hook: every group whose trajectories all failed by their own doing (their last turns'
    verdicts) goes into the data source's BDR buffer; repair groups are not added again."""
    bdr = getattr(data_source, "bdr", None)
    if bdr is None:
        return
    for group in all_samples:
        group = list(_flat([group]))
        if not group or any((s.metadata or {}).get("anvil_bdr_repair") for s in group):
            continue
        meta = [s.metadata or {} for s in group]
        if any("anvil_last_verdict" not in m for m in meta):
            continue
        bdr.add_group({"messages": _messages(group[0].prompt), "label": group[0].label},
                      [m["anvil_last_answer"] for m in meta], [m["anvil_last_verdict"] for m in meta])
