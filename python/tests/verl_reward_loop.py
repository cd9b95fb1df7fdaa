"""Runs verl 0.9.1's own reward loop worker over a batch, in .venv-verl (scripts/verl_venv.sh), for
test_verl_reward_loop.py: verl's config, verl's RewardLoopWorker loading the reward manager or the custom reward
function the way a trainer's config names them, verl's DataProto, verl's assemble_rm_scores, and the per-key
arrays verl makes of reward_extra_info. No model: a byte-level tokenizer made here stands in for the actor's.

    python verl_reward_loop.py SPEC.json   ->  one JSON object on stdout

SPEC: {"reward": {...overrides of verl's reward config...}, "ground_truths": [...], "responses": [...]}.
"""

import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch
import verl
from omegaconf import OmegaConf
from tokenizers import Tokenizer, decoders, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast
from verl import DataProto
from verl.experimental.reward_loop.reward_loop import RewardLoopWorker


def byte_tokenizer(folder):
    """Every byte one token (GPT-2's byte alphabet, no merges): text round-trips exactly."""
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    vocab = {"<pad>": 0, "<eos>": 1, **{c: i + 2 for i, c in enumerate(sorted(alphabet))}}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tok.decoder = decoders.ByteLevel()
    PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>").save_pretrained(folder)


def batch(tokenizer, prompts, responses, ground_truths, response_length):
    """A rollout batch as verl lays it out: left-padded prompts, right-padded responses, one attention mask."""
    p_ids = [tokenizer.encode(p) for p in prompts]
    r_ids = [tokenizer.encode(r) + [tokenizer.eos_token_id] for r in responses]
    prompt_length = max(len(p) for p in p_ids)
    assert max(len(r) for r in r_ids) <= response_length
    pad = tokenizer.pad_token_id
    prompt_t = torch.tensor([[pad] * (prompt_length - len(p)) + p for p in p_ids])
    response_t = torch.tensor([r + [pad] * (response_length - len(r)) for r in r_ids])
    mask = torch.tensor([[0] * (prompt_length - len(p)) + [1] * len(p) + [1] * len(r) +
                         [0] * (response_length - len(r)) for p, r in zip(p_ids, r_ids)])
    return DataProto.from_dict(
        tensors={"prompts": prompt_t, "responses": response_t, "attention_mask": mask,
                 "input_ids": torch.cat([prompt_t, response_t], dim=1)},
        non_tensors={"data_source": np.array(["anvil/kernelbench"] * len(responses), dtype=object),
                     "reward_model": np.array([{"ground_truth": g, "style": "rule"} for g in ground_truths],
                                              dtype=object)})


def main():
    spec = json.loads(Path(sys.argv[1]).read_text())
    folder = tempfile.mkdtemp(prefix="anvil-verl-tokenizer-")
    byte_tokenizer(folder)
    reward = OmegaConf.load(Path(verl.__file__).parent / "trainer" / "config" / "reward" / "reward.yaml")
    reward = OmegaConf.merge(reward, spec["reward"])
    config = OmegaConf.create({"reward": reward,
                               "actor_rollout_ref": {"model": {"path": folder, "tokenizer_path": None}}})
    worker = RewardLoopWorker(config, None)
    manager_class = type(worker.reward_manager)
    data = batch(worker.input_tokenizer, ["Write the kernel."] * len(spec["responses"]), spec["responses"],
                 spec["ground_truths"], spec.get("response_length", 8192))
    outputs = worker.loop.run_until_complete(worker.compute_score_batch(data))
    # What RewardLoopManager.compute_rm_score does with the outputs.
    scores = [o["reward_score"] for o in outputs]
    rm_scores = manager_class.assemble_rm_scores(data, scores)
    infos = [o.get("reward_extra_info", {}) for o in outputs]
    keys = list(infos[0].keys())
    columns = {k: np.array([info[k] for info in infos]).tolist() for k in keys}
    last = data.batch["attention_mask"][:, data.batch["prompts"].shape[1]:].sum(dim=1) - 1
    json.dump({"manager": manager_class.__name__, "scores": scores,
               "rm_scores_at_last_token": [float(rm_scores[i, last[i]]) for i in range(len(scores))],
               "rm_scores_sum": [float(rm_scores[i].sum()) for i in range(len(scores))],
               "keys": keys, "infos": infos, "columns": columns},
              sys.stdout, default=str)


if __name__ == "__main__":
    main()
