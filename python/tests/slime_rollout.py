"""Runs anvil's slime rollout and hooks (anvil_client/slime_rollout.py) in .venv-verl, with the slime stand-in of
python/tests/slime_stub on the path (slime itself needs Megatron and SGLang), for test_slime_rollout.py and the RL
acceptance run (bench/scripts/rl_rollout_acceptance.py). A scripted `/generate` over real HTTP answers in SGLang's
shape (text, meta_info.output_token_logprobs as [log-prob, token id], finish_reason); the real `anvil serve` ($ANVIL_URL)
judges every answer.

    python slime_rollout.py SPEC.json  ->  one JSON object on stdout

SPEC: {"groups": [{"task": TASK, "answers": [[turn 1, turn 2, ...] per sample]}], "train_shift": {"K": 0.3},
       "bdr_draws": N}. Sample K (counted over the groups) answers its turn T with answers[T - 1]; "train_shift"
moves sample K's training log-probs from the rollout's by that much on every other token, for MirrorPop."""

import asyncio
import http.server
import json
import sys
import tempfile
import threading
from pathlib import Path
from types import SimpleNamespace

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE / "slime_stub"), str(HERE.parent), str(HERE)]
import torch  # noqa: E402
from slime.utils.types import Sample  # noqa: E402
from transformers import AutoTokenizer  # noqa: E402

from anvil_client import slime_rollout as rollout  # noqa: E402
from verl_agent_loop import TEMPLATE  # noqa: E402
from verl_reward_loop import byte_tokenizer  # noqa: E402


def serve_generate(tokenizer, answers):
    """SGLang's /generate, scripted: sample K's turn T (the generation prompts in its input) answers answers[K][T-1]."""
    calls = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            text = tokenizer.decode(body["input_ids"])
            k = int(text.split("[sample ")[1].split("]")[0])
            turn = text.count("<|assistant|>")
            answer = answers[k][turn - 1]
            ids = tokenizer.encode(answer, add_special_tokens=False) + [tokenizer.eos_token_id]
            calls.append({"sample": k, "turn": turn, "input_tokens": len(body["input_ids"]),
                          "return_logprob": body.get("return_logprob")})
            out = {"text": answer, "meta_info": {"finish_reason": {"type": "stop"},
                                                 "output_token_logprobs": [[-0.01 * (i % 7 + 1), t]
                                                                           for i, t in enumerate(ids)]}}
            data = json.dumps(out).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, calls


def describe(tokenizer, s):
    masked = [t for t, m in zip(s.tokens[len(s.tokens) - s.response_length:], s.loss_mask or []) if m]
    return {"group_index": s.group_index, "reward": s.reward, "status": s.status.value, "remove_sample": s.remove_sample,
            "response_length": s.response_length, "loss_mask": s.loss_mask, "rollout_log_probs": s.rollout_log_probs,
            "tokens": len(s.tokens), "response_text": tokenizer.decode(s.tokens[len(s.tokens) - s.response_length:]),
            "masked_text": tokenizer.decode(masked),
            "metadata": {k: v for k, v in s.metadata.items() if k != "anvil_last_verdict"}}


def main():
    spec = json.loads(Path(sys.argv[1]).read_text())
    folder = tempfile.mkdtemp(prefix="anvil-slime-tokenizer-")
    byte_tokenizer(folder)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    tokenizer.chat_template = TEMPLATE
    tokenizer.save_pretrained(folder)
    answers = [a for g in spec["groups"] for a in g["answers"]]
    server, calls = serve_generate(tokenizer, answers)
    n = len(spec["groups"][0]["answers"])
    args = SimpleNamespace(hf_checkpoint=folder, sglang_router_ip="127.0.0.1", sglang_router_port=server.server_port,
                           n_samples_per_prompt=n, reward_key=None, seed=1, prompt_samples=[])

    def prompt(k):
        return [{"role": "system", "content": "You write kernels."},
                {"role": "user", "content": f"[sample {k}] Make this model faster."}]

    samples = []
    for g, group in enumerate(spec["groups"]):
        for _ in group["answers"]:
            samples.append(Sample(prompt=prompt(len(samples)), label=group["task"], group_index=g, index=len(samples)))

    async def generate(batch):
        return await asyncio.gather(*(rollout.custom_generate(args, s, {"temperature": 1.0}) for s in batch))

    samples = asyncio.run(generate(samples))
    groups = [samples[g * n:(g + 1) * n] for g in range(len(spec["groups"]))]
    rollout.drop_infra_samples(args, groups)
    raw, advantages = rollout.grpo_without_infra(args, samples)

    # MirrorPop over the rollout's own log-probs, with the training side moved for the samples the spec names.
    train, roll, masks = [], [], []
    for k, s in enumerate(samples):
        r = torch.tensor(s.rollout_log_probs or [0.0] * s.response_length)
        shift = float(spec.get("train_shift", {}).get(str(k), 0.0))
        t = r + torch.tensor([shift if i % 2 == 0 else 0.0 for i in range(len(r))])
        train.append(t)
        roll.append(r)
        masks.append(torch.tensor(s.loss_mask, dtype=torch.float32))
    pg_loss = torch.ones(sum(len(t) for t in train))
    _, kept_masks, metrics = rollout.mirror_pop_tis(args, pg_loss=pg_loss, train_log_probs=train,
                                                     rollout_log_probs=roll, loss_masks=masks)
    kept = [bool(m.sum() > 0) or bool(masks[i].sum() == 0) for i, m in enumerate(kept_masks)]

    # BDR: the all-failed groups into the data source's buffer, then a batch drawn from it.
    source = rollout.BDRDataSource(args)
    rollout.feed_bdr(args, groups, source)
    buffered = len(source.bdr)
    drawn = source.get_samples(spec.get("bdr_draws", 0)) if spec.get("bdr_draws") else []
    repair = []
    for group in drawn:
        s = group[0]
        repair.append({"bdr": s.metadata.get("anvil_bdr_repair", False), "label_is_task": s.label in
                       [g["task"] for g in spec["groups"]], "roles": [m["role"] for m in s.prompt] if
                       isinstance(s.prompt, list) else None, "last": s.prompt[-1]["content"] if
                       isinstance(s.prompt, list) else None, "failed": s.prompt[-2]["content"] if
                       isinstance(s.prompt, list) and len(s.prompt) > 2 else None,
                       "group_index": s.group_index, "n": len(group)})
    server.shutdown()
    json.dump({"samples": [describe(tokenizer, s) for s in samples], "raw": raw, "advantages": advantages,
               "kept": kept, "dropped_metric": float(metrics["anvil_mirror_pop_dropped"].mean())
               if metrics["anvil_mirror_pop_dropped"].numel() else 0.0,
               "bdr_buffered": buffered, "bdr_drawn": repair, "calls": calls}, sys.stdout, default=str)


if __name__ == "__main__":
    main()
