"""Runs anvil's verl agent loop (anvil_client/verl_agent_loop.py) in .venv-verl (scripts/verl_venv.sh) for
test_verl_agent_loop.py, at verl 0.9.1's own boundary: the loop made as verl's AgentLoopWorker makes it (its config,
a tokenizer, the Continuous Token builder), a fake server manager that returns verl's TokenOutput with log-probs, and
the real `anvil serve` judging each answer. No model: the byte-level tokenizer of verl_reward_loop.py, with a chat
template, stands in for the actor's.

    python verl_agent_loop.py SPEC.json   ->  one JSON object on stdout

SPEC: {"loop": {...the agent loop's config...}, "ground_truth": TASK (or "ground_truths": one per sample), "samples":
[[answer turn 1, answer turn 2, ...], ...], "response_length": N}; with "loop_yaml": {"path", "name"}, the loop's
config is that entry of an agent-loop file, "loop" overriding it. The fake server answers sample K's turn T with
samples[K][T - 1]. With "index" (each sample's group) the outputs also go through anvil's estimator (anvil_grpo) and
MirrorPop's filter as verl's trainer would apply them: "train_shift" {"K": x} moves sample K's training log-probs
from the rollout's by x on every other token, and "delta" is MirrorPop's bound."""

import asyncio
import json
import sys
import tempfile
from pathlib import Path

from omegaconf import OmegaConf
from transformers import AutoTokenizer
from verl.experimental.agent_loop.agent_loop import DictConfigWrap
from verl.utils.dataset.rl_dataset import RLHFDataset
from verl.workers.rollout.replica import TokenOutput

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from anvil_client.verl_agent_loop import AnvilRepairAgentLoop  # noqa: E402
from verl_reward_loop import byte_tokenizer  # noqa: E402

TEMPLATE = ("{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<eos>{% endfor %}"
            "{% if add_generation_prompt %}<|assistant|>{% endif %}")


class FakeServer:
    """verl's server manager at its boundary: generate(request_id, prompt_ids, sampling_params) -> TokenOutput."""

    def __init__(self, tokenizer, samples):
        self.tokenizer, self.samples, self.calls = tokenizer, samples, []

    async def generate(self, request_id, *, prompt_ids, sampling_params, **kwargs):
        text = self.tokenizer.decode(prompt_ids)
        sample = int(text.split("[sample ")[1].split("]")[0])
        turn = text.count("<|assistant|>")  # The generation prompt of each turn.
        answer = self.samples[sample][turn - 1]
        ids = self.tokenizer.encode(answer, add_special_tokens=False) + [self.tokenizer.eos_token_id]
        self.calls.append({"sample": sample, "turn": turn, "prompt_tokens": len(prompt_ids)})
        # Log-probs a rollout engine would give: one per token, made up and distinct.
        return TokenOutput(token_ids=ids, log_probs=[-0.01 * (i % 7 + 1) for i in range(len(ids))],
                           stop_reason="completed")


def main():
    spec = json.loads(Path(sys.argv[1]).read_text())
    folder = tempfile.mkdtemp(prefix="anvil-verl-tokenizer-")
    byte_tokenizer(folder)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    tokenizer.chat_template = TEMPLATE
    config = OmegaConf.create({"actor_rollout_ref": {"rollout": {"prompt_length": 4096,
                                                                 "response_length": spec.get("response_length", 16384)}},
                               "data": {}})
    server = FakeServer(tokenizer, spec["samples"])
    loop_config = dict(spec["loop"])
    if "loop_yaml" in spec:  # An entry of an agent-loop file, as verl reads it, under the spec's settings.
        entry = next(e for e in OmegaConf.load(spec["loop_yaml"]["path"]) if e.name == spec["loop_yaml"]["name"])
        entry = {k: v for k, v in OmegaConf.to_container(entry).items() if k not in ("name", "_target_")}
        loop_config = {**entry, **loop_config}

    async def one(k):
        loop = AnvilRepairAgentLoop(trainer_config=DictConfigWrap(config), server_manager=server, tokenizer=tokenizer,
                                    processor=None, dataset_cls=RLHFDataset, data_config=DictConfigWrap(config.data),
                                    **loop_config)
        raw_prompt = [{"role": "system", "content": "You write kernels."},
                      {"role": "user", "content": f"[sample {k}] Make this model faster."}]
        truth = spec["ground_truths"][k] if "ground_truths" in spec else spec["ground_truth"]
        out = await loop.run({"temperature": 1.0}, raw_prompt=raw_prompt,
                             reward_model={"ground_truth": truth, "style": "rule"})
        return {"prompt_ids": out.prompt_ids, "response_ids": out.response_ids, "response_mask": out.response_mask,
                "response_logprobs": out.response_logprobs, "reward_score": out.reward_score,
                "num_turns": out.num_turns, "extra_fields": out.extra_fields,
                "prompt_text": tokenizer.decode(out.prompt_ids), "response_text": tokenizer.decode(out.response_ids),
                "masked_text": tokenizer.decode([t for t, m in zip(out.response_ids, out.response_mask) if m])}

    async def every():
        return await asyncio.gather(*(one(k) for k in range(len(spec["samples"]))))

    outputs = asyncio.run(every())
    result = {"outputs": outputs, "calls": server.calls}
    if "index" in spec:
        result.update(estimate(outputs, spec))
    json.dump(result, sys.stdout, default=str)


def estimate(outputs, spec):
    """anvil_grpo over the batch as verl lays it out (the score on the last response token, right-padded), and
    MirrorPop's keep decision from token-level rollout-correction weights."""
    import numpy as np
    import torch
    from anvil_client.turns import mirror_pop_kept
    from anvil_client.verl_algos import compute_anvil_grpo_advantage

    width = max(len(o["response_mask"]) for o in outputs)
    mask = torch.zeros(len(outputs), width)
    rewards = torch.zeros(len(outputs), width)
    weights = torch.zeros(len(outputs), width)
    for i, o in enumerate(outputs):
        n = len(o["response_mask"])
        mask[i, :n] = torch.tensor(o["response_mask"], dtype=torch.float32)
        rewards[i, max(n - 1, 0)] = o["reward_score"]
        shift = float(spec.get("train_shift", {}).get(str(i), 0.0))
        weights[i, :n] = torch.exp(torch.tensor([shift if t % 2 == 0 else 0.0 for t in range(n)]))
    advantages, _ = compute_anvil_grpo_advantage(rewards, mask, np.array(spec["index"], dtype=object))
    kept = mirror_pop_kept(torch.log(weights), mask, float(spec.get("delta", 0.05)))
    first = [float(advantages[i, 0]) if mask[i].sum() > 0 else 0.0 for i in range(len(outputs))]
    return {"advantages": first, "kept": kept.tolist()}


if __name__ == "__main__":
    main()
