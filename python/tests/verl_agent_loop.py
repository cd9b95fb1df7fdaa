"""Runs anvil's verl agent loop (anvil_client/verl_agent_loop.py) in .venv-verl (scripts/verl_venv.sh) for
test_verl_agent_loop.py, at verl 0.9.1's own boundary: the loop made as verl's AgentLoopWorker makes it (its config,
a tokenizer, the Continuous Token builder), a fake server manager that returns verl's TokenOutput with log-probs, and
the real `anvil serve` judging each answer. No model: the byte-level tokenizer of verl_reward_loop.py, with a chat
template, stands in for the actor's.

    python verl_agent_loop.py SPEC.json   ->  one JSON object on stdout

SPEC: {"loop": {...the agent loop's config...}, "ground_truth": TASK, "samples": [[answer turn 1, answer turn 2,
...], ...], "response_length": N}. The fake server answers sample K's turn T with samples[K][T - 1]."""

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

    async def one(k):
        loop = AnvilRepairAgentLoop(trainer_config=DictConfigWrap(config), server_manager=server, tokenizer=tokenizer,
                                    processor=None, dataset_cls=RLHFDataset, data_config=DictConfigWrap(config.data),
                                    **spec["loop"])
        raw_prompt = [{"role": "system", "content": "You write kernels."},
                      {"role": "user", "content": f"[sample {k}] Make this model faster."}]
        out = await loop.run({"temperature": 1.0}, raw_prompt=raw_prompt,
                             reward_model={"ground_truth": spec["ground_truth"], "style": "rule"})
        return {"prompt_ids": out.prompt_ids, "response_ids": out.response_ids, "response_mask": out.response_mask,
                "response_logprobs": out.response_logprobs, "reward_score": out.reward_score,
                "num_turns": out.num_turns, "extra_fields": out.extra_fields,
                "prompt_text": tokenizer.decode(out.prompt_ids), "response_text": tokenizer.decode(out.response_ids),
                "masked_text": tokenizer.decode([t for t, m in zip(out.response_ids, out.response_mask) if m])}

    async def every():
        return await asyncio.gather(*(one(k) for k in range(len(spec["samples"]))))

    outputs = asyncio.run(every())
    json.dump({"outputs": outputs, "calls": server.calls}, sys.stdout, default=str)


if __name__ == "__main__":
    main()
