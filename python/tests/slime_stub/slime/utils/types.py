"""slime.utils.types at 624b824a, the parts anvil's rollout uses (see ../../README.md)."""

from dataclasses import dataclass, field
from enum import Enum
from typing import Any


@dataclass
class Sample:
    group_index: int | None = None
    index: int | None = None
    rollout_id: int | None = None
    prompt: str | list[dict[str, str]] = ""
    tokens: list[int] = field(default_factory=list)
    response: str = ""
    response_length: int = 0
    label: str | None = None
    reward: float | dict[str, Any] | None = None
    loss_mask: list[int] | None = None
    rollout_log_probs: list[float] | None = None
    rollout_top_p_token_ids: list[int] | None = None
    rollout_top_p_token_offsets: list[int] | None = None
    remove_sample: bool = False

    class Status(Enum):
        PENDING = "pending"
        COMPLETED = "completed"
        TRUNCATED = "truncated"
        ABORTED = "aborted"
        FAILED = "failed"

    status: Status = Status.PENDING
    metadata: dict = field(default_factory=dict)

    def get_reward_value(self, args) -> float:
        return self.reward if not args.reward_key else self.reward[args.reward_key]

    def append_response_tokens(self, args=None, *, tokens=None, log_probs=None, trainable=True, meta_info=None,
                               text=None, update_terminal_info=True):
        tokens = [int(t) for t in (tokens or [])]
        log_probs = None if log_probs is None else [float(x) for x in log_probs]
        if log_probs is not None and len(log_probs) != len(tokens):
            raise ValueError(f"log_probs length {len(log_probs)} != tokens length {len(tokens)}")
        if tokens and trainable and log_probs is None:
            raise ValueError("trainable response tokens require rollout log probabilities.")
        if tokens and not trainable:
            if log_probs is not None:
                raise ValueError("non-trainable response tokens should not pass rollout log probabilities.")
            log_probs = [0.0] * len(tokens)
        if text is not None:
            self.response += text
        previous = self.response_length
        if tokens:
            self.tokens += tokens
            self.response_length += len(tokens)
            if self.loss_mask is None:
                self.loss_mask = [1] * previous
            self.loss_mask += [1 if trainable else 0] * len(tokens)
        if log_probs is not None:
            if self.rollout_log_probs is None:
                if trainable and previous:
                    raise ValueError("Cannot append trainable rollout log probabilities to a sample with existing "
                                     "response tokens but no existing rollout_log_probs.")
                self.rollout_log_probs = [0.0] * previous
            self.rollout_log_probs += log_probs
