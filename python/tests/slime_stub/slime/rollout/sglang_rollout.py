"""slime.rollout.sglang_rollout.GenerateState at 624b824a: its tokenizer (see ../../README.md)."""

from transformers import AutoTokenizer


class GenerateState:
    _tokenizers = {}

    def __init__(self, args):
        path = args.hf_checkpoint
        if path not in self._tokenizers:
            self._tokenizers[path] = AutoTokenizer.from_pretrained(path)
        self.tokenizer = self._tokenizers[path]
