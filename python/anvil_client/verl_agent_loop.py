"""verl's agent loop for kernels repaired over turns (docs/rl.md, "verl"): the policy writes a kernel, anvil's reward
service judges it, the verifier's feedback goes back as the next user message, and the policy repairs it, up to
`max_turns` turns, stopping at the first pass. The trajectory's reward is PrimeEcho's (anvil_rl.prime_echo) and the
policy gradient goes to the first response alone.

    # agent.yaml, named by actor_rollout_ref.rollout.agent.agent_loop_config_path
    - name: anvil_repair
      _target_: anvil_client.verl_agent_loop.AnvilRepairAgentLoop
      max_turns: 3
      bonus_first: 0.2      # ours: the paper gives no values
      bonus_second: 0.1
      anvil_url: http://127.0.0.1:8000
      backend: cuda

Each dataset row names the task as verl's reward functions take it (`reward_model.ground_truth`: the sha256 of a
task the service holds, or its text) and `agent_name: anvil_repair`. What the loop returns:

- `train_on: first_turn` (the default): the prompt and the first response only. With causal attention the first
  response's log-probs do not depend on anything after it, so the loss is the one the whole trajectory with the
  later tokens masked would give, at about a third of the tokens (python/tests/test_verl_agent_loop.py shows both
  equal). `train_on: trajectory` returns every turn with `response_mask` 1 on the first response's tokens only.
- `reward_score` (verl puts it on the last response token): the PrimeEcho score over the turns' rewards.
- A sample the machine failed (an `infra_error` verdict, a service that cannot be reached or answers past
  `timeout_s`) carries no reward: its `response_mask` is all zero, its score 0.0, `anvil_infra_error` 1 in its extra
  fields; the `anvil_grpo` estimator (anvil_client.verl_algos) leaves such rows out of their group's statistics.
- Extra fields, the same keys for every sample: `turn_scores` (each turn's reward, NaN where none),
  `anvil_statuses` (each turn's verdict status or model outcome), `anvil_prime_echo`, `anvil_infra_error`,
  `anvil_logprobs_mode` (the rollout's `logprobs_mode`: MirrorPop needs `processed_logprobs`, verl's default), and
  `anvil_bdr_repair`.

Settings (the yaml's, else $ANVIL_URL, $ANVIL_BACKEND, ... as anvil_client.verl reads them): anvil_url, token_file,
backend, candidate_format, policy, trials, timeout_s (per verdict, default 280), max_concurrency, retries; and
max_turns (3), alpha (0.75), bonus_first and bonus_second (required), train_on; and BDR's (anvil_client.verl_bdr):
bdr_reissue_prob (0: off), bdr_capacity (256), bdr_seed (0). With BDR on, a group (verl's `uid`) may answer a repair
task in place of its prompt (`anvil_bdr_repair` 1 in its extra fields); give validation rows an agent loop without it
(examples/rl/verl/agent_loop.yaml: `anvil_repair_eval`)."""

import math
import sys
from pathlib import Path
from uuid import uuid4

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from anvil_client.turns import Trajectory, judge, prime_echo_settings, repaired  # noqa: E402
from anvil_client.verl_bdr import bdr_store  # noqa: E402
from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopOutput, register  # noqa: E402

TRAIN_ON = ("first_turn", "trajectory")


@register("anvil_repair")
class AnvilRepairAgentLoop(AgentLoopBase):
    def __init__(self, *args, max_turns=3, alpha=0.75, bonus_first=None, bonus_second=None, train_on="first_turn",
                 bdr_reissue_prob=0.0, bdr_capacity=256, bdr_seed=0, **kwargs):
        settings = {k: kwargs.pop(k) for k in ("anvil_url", "token_file", "backend", "candidate_format", "policy",
                                                "trials", "timeout_s", "max_concurrency", "retries") if k in kwargs}
        super().__init__(*args, **kwargs)
        try:
            alpha, bonus_first, bonus_second = prime_echo_settings(
                {"alpha": alpha, "bonus_first": bonus_first, "bonus_second": bonus_second})
        except ValueError as e:
            raise ValueError(f"anvil_repair: {e} (bonus_first and bonus_second in the agent loop's config)") from None
        if train_on not in TRAIN_ON:
            raise ValueError(f"anvil_repair: train_on is one of {TRAIN_ON}, not {train_on!r}")
        if int(max_turns) < 1:
            raise ValueError(f"anvil_repair: max_turns is at least 1, not {max_turns}")
        self.max_turns, self.alpha, self.train_on = int(max_turns), float(alpha), train_on
        self.bonus_first, self.bonus_second = float(bonus_first), float(bonus_second)
        self.settings = settings
        if not 0.0 <= float(bdr_reissue_prob) <= 1.0 or int(bdr_capacity) < 1:
            raise ValueError(f"anvil_repair: bdr_reissue_prob is in [0, 1] and bdr_capacity >= 1, not "
                             f"{bdr_reissue_prob} and {bdr_capacity}")
        self.bdr = (float(bdr_reissue_prob), int(bdr_capacity), int(bdr_seed))
        self.response_length = self.rollout_config.response_length
        # What the rollout's log-probs are of (MirrorPop needs the sampled distribution's), recorded per sample.
        self.logprobs_mode = self.rollout_config.get("logprobs_mode", "processed_logprobs")

    async def verify(self, answer, ground_truth):
        return await judge(self.settings, answer, ground_truth)

    async def run(self, sampling_params, **kwargs):
        messages = [dict(m) for m in kwargs["raw_prompt"]]
        ground_truth = kwargs["reward_model"]["ground_truth"]
        own = {"messages": [dict(m) for m in messages], "ground_truth": ground_truth}
        store, repair = None, None
        if self.bdr[0] > 0 and kwargs.get("uid") is not None:
            store = bdr_store(self.bdr[1], self.bdr[0], self.bdr[2])
            repair = await _quietly(store.claim(kwargs["uid"]))
            if repair is not None:  # BDR re-issues a failed group as a repair task, to this whole group.
                messages, ground_truth = [dict(m) for m in repair["messages"]], repair["task"]["ground_truth"]
        answer, verdict = None, None
        prompt_ids = await self.ct_build_initial_tokens(messages)
        runtime_ids, response_mask = list(prompt_ids), []
        logprobs = None
        first_end, turns = 0, Trajectory()
        request_id = uuid4().hex
        for turn in range(1, self.max_turns + 1):
            out = await self.server_manager.generate(request_id=request_id, prompt_ids=runtime_ids,
                                                     sampling_params=sampling_params)
            if turn == 1 and out.log_probs:
                logprobs = []
            merged, response_mask, logprobs = await self.ct_merge_assistant_token(
                runtime_ids, out.token_ids, response_mask, logprobs,
                assistant_logprobs=out.log_probs if logprobs is not None else None)
            runtime_ids = merged.token_ids
            if turn == 1:
                first_end = len(response_mask)
            answer = self.tokenizer.decode(out.token_ids, skip_special_tokens=True)
            verdict = await self.verify(answer, ground_truth)
            if not turns.add(verdict) or turn == self.max_turns or len(response_mask) >= self.response_length:
                break
            answered, following = repaired(messages, answer, verdict)  # The answer's tokens are in runtime_ids.
            merged, response_mask, logprobs = await self.ct_merge_context_msg(answered, following, runtime_ids,
                                                                              response_mask, logprobs)
            messages, runtime_ids = following, merged.token_ids

        response_ids = runtime_ids[len(runtime_ids) - len(response_mask):]
        prompt_ids = runtime_ids[:len(runtime_ids) - len(response_mask)]
        if self.train_on == "first_turn":
            response_ids, response_mask = response_ids[:first_end], response_mask[:first_end]
            logprobs = logprobs[:first_end] if logprobs is not None else None
        else:  # The whole trajectory, the loss on the first response alone (PrimeEcho).
            response_mask = [m if i < first_end else 0 for i, m in enumerate(response_mask)]
        score = turns.score(self.alpha, self.bonus_first, self.bonus_second)
        if turns.infra:
            response_mask = [0] * len(response_mask)  # The machine's failure: nothing to learn from.
        if store is not None:
            await _quietly(store.report(kwargs["uid"], self.rollout_config.get("n", 1), None if repair else own,
                                        answer, verdict))
        n = self.response_length
        return AgentLoopOutput(
            prompt_ids=prompt_ids, response_ids=response_ids[:n], response_mask=response_mask[:n],
            response_logprobs=logprobs[:n] if logprobs is not None else None,
            reward_score=0.0 if score is None else score, num_turns=2 * len(turns.rewards), metrics={},
            extra_fields={"turn_scores": [math.nan if r is None else r for r in turns.rewards], "tool_rewards": [],
                          "anvil_statuses": turns.statuses, "anvil_prime_echo": math.nan if score is None else score,
                          "anvil_infra_error": int(turns.infra), "anvil_logprobs_mode": self.logprobs_mode,
                          "anvil_bdr_repair": int(repair is not None)})


async def _quietly(call):
    """BDR's store answers, or None: a store that fails costs the run its repair tasks, never a sample."""
    try:
        return await call
    except Exception as e:  # noqa: BLE001 (Ray's errors are many; none may stop the rollout)
        print(f"anvil_repair: BDR's store failed ({type(e).__name__}: {e}); this group goes on without it",
              file=sys.stderr)
        return None
