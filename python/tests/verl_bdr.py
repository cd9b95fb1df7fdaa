"""Runs BDR through anvil's verl agent loop (anvil_client/verl_bdr.py) in .venv-verl for test_verl_agent_loop.py, as
verl spreads a batch: a local Ray cluster, two Ray actors standing in for verl's AgentLoopWorkers (each making an
AnvilRepairAgentLoop per sample, as verl's worker does, with a fake server manager returning TokenOutput and the
byte-level tokenizer of verl_reward_loop.py), the samples of each group dealt to both, and the real `anvil serve`
judging every answer. The store is the real `anvil_bdr` actor the loops make.

    python verl_bdr.py SPEC.json   ->  one JSON object on stdout

SPEC: {"loop": {...the agent loop's config...}, "n": samples per group, "steps": [{"groups": [{"uid", "tag",
"ground_truth"}, ...], "answers": {TAG: {"K": answer}}}, ...]}. Steps run one after another, their groups at once;
every sample of a group has the prompt "[task TAG] ...", and the fake server answers a prompt of tag T whose
conversation holds K assistant turns (the generation prompt counted) with the step's answers[T][K]."""

import asyncio
import json
import os
import sys
from pathlib import Path

import ray

HERE = Path(__file__).resolve().parent
TEMPLATE = ("{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<eos>{% endfor %}"
            "{% if add_generation_prompt %}<|assistant|>{% endif %}")


@ray.remote(num_cpus=0)
class Worker:
    """One of verl's AgentLoopWorkers, as far as BDR sees it: agent loops made per sample, run concurrently."""

    def __init__(self, loop, n):
        import tempfile

        from omegaconf import OmegaConf
        from transformers import AutoTokenizer

        sys.path[:0] = [str(HERE), str(HERE.parent)]
        from verl_reward_loop import byte_tokenizer

        folder = tempfile.mkdtemp(prefix="anvil-verl-tokenizer-")
        byte_tokenizer(folder)
        self.tokenizer = AutoTokenizer.from_pretrained(folder)
        self.tokenizer.chat_template = TEMPLATE
        self.config = OmegaConf.create({"actor_rollout_ref": {"rollout": {"prompt_length": 8192,
                                                                          "response_length": 16384, "n": n}},
                                        "data": {}})
        self.loop = loop

    def run(self, samples, answers):
        from verl.experimental.agent_loop.agent_loop import DictConfigWrap
        from verl.utils.dataset.rl_dataset import RLHFDataset
        from verl.workers.rollout.replica import TokenOutput

        from anvil_client.verl_agent_loop import AnvilRepairAgentLoop

        tokenizer = self.tokenizer

        class FakeServer:
            async def generate(self, request_id, *, prompt_ids, sampling_params, **kwargs):
                text = tokenizer.decode(prompt_ids)
                tag = text.split("[task ")[1].split("]")[0]
                answer = answers[tag][str(text.count("<|assistant|>"))]
                ids = tokenizer.encode(answer, add_special_tokens=False) + [tokenizer.eos_token_id]
                return TokenOutput(token_ids=ids, log_probs=[-0.01] * len(ids), stop_reason="completed")

        async def one(sample):
            loop = AnvilRepairAgentLoop(trainer_config=DictConfigWrap(self.config), server_manager=FakeServer(),
                                        tokenizer=tokenizer, processor=None, dataset_cls=RLHFDataset,
                                        data_config=DictConfigWrap(self.config.data), **self.loop)
            raw_prompt = [{"role": "system", "content": "You write kernels."},
                          {"role": "user", "content": f"[task {sample['tag']}] Make this model faster."}]
            out = await loop.run({"temperature": 1.0}, raw_prompt=raw_prompt, uid=sample["uid"],
                                 reward_model={"ground_truth": sample["ground_truth"], "style": "rule"})
            return {"uid": sample["uid"], "worker": os.getpid(), "prompt_text": tokenizer.decode(out.prompt_ids),
                    "reward_score": out.reward_score, "extra_fields": out.extra_fields}

        async def every():
            return await asyncio.gather(*(one(s) for s in samples))

        return asyncio.run(every())


def main():
    spec = json.loads(Path(sys.argv[1]).read_text())
    os.environ["PYTHONPATH"] = os.pathsep.join([str(HERE.parent), os.environ.get("PYTHONPATH", "")])
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        n = spec["n"]
        workers = [Worker.remote(spec["loop"], n) for _ in range(2)]
        steps = []
        for step in spec["steps"]:
            dealt = [[], []]
            for group in step["groups"]:
                for k in range(n):  # Each group's samples on both workers, as verl's chunks may put them.
                    dealt[k % 2].append({"uid": group["uid"], "tag": group["tag"],
                                         "ground_truth": group["ground_truth"]})
            outputs = sum(ray.get([w.run.remote(d, step["answers"]) for w, d in zip(workers, dealt)]), [])
            stats = ray.get(ray.get_actor("anvil_bdr").stats.remote())
            steps.append({"outputs": outputs, "stats": stats})
        json.dump({"steps": steps}, sys.stdout, default=str)
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
