"""BDR (MusaCoder §5): groups whose every sample failed become repair tasks. A bounded FIFO buffer keeps one entry per
such group (its best sample and the verifier's feedback on it); each draw re-issues the oldest entry with a small
probability, as a repair prompt in the model loop's own words."""

import collections
import random

from anvil_rl.repair import repair_message
from anvil_rl.reward import MACHINE, outcome_of, reward


def _first_turn(task):
    """The first turn's chat messages of a task: its `messages`, or its `prompt` (a string: one user message; or a
    list of messages)."""
    if isinstance(task, dict):
        prompt = task.get("messages", task.get("prompt"))
    else:
        prompt = task
    if isinstance(prompt, str):
        return [{"role": "user", "content": prompt}]
    if isinstance(prompt, list) and all(isinstance(m, dict) and "role" in m and "content" in m for m in prompt):
        return [dict(m) for m in prompt]
    raise ValueError("a task is its prompt (a string or chat messages) or a dict with `messages` or `prompt`; "
                     f"got {type(task).__name__}")


class BDRBuffer:
    def __init__(self, capacity, reissue_prob, seed):
        if not isinstance(capacity, int) or capacity < 1:
            raise ValueError(f"capacity is an int >= 1, not {capacity!r}")
        if not 0.0 <= reissue_prob <= 1.0:
            raise ValueError(f"reissue_prob is a probability in [0, 1], not {reissue_prob}")
        self.capacity, self.reissue_prob = capacity, reissue_prob
        self._entries = collections.deque(maxlen=capacity)  # Oldest first; the oldest falls out when full.
        self._random = random.Random(seed)

    def __len__(self):
        return len(self._entries)

    def add_group(self, task, samples, verdicts):
        """Keeps the group (the samples of one prompt, each the model's answer, with its verdict or outcome as
        reward() takes it) iff it is not empty, every sample failed and none failed by the machine's fault. The entry
        is the best sample (highest reward; the first among equals). Returns whether it was kept."""
        samples, verdicts = list(samples), list(verdicts)
        if len(samples) != len(verdicts):
            raise ValueError(f"{len(samples)} samples but {len(verdicts)} verdicts")
        if not samples:
            return False
        statuses = [outcome_of(v)[0] for v in verdicts]
        if any(s == "pass" or s in MACHINE for s in statuses):
            return False
        messages = _first_turn(task)
        best = max(range(len(samples)), key=lambda i: (reward(verdicts[i]), -i))
        repair = repair_message(verdicts[best])
        _, body = outcome_of(verdicts[best])
        feedback = body.get("feedback") if isinstance(body.get("feedback"), str) else repair
        self._entries.append({
            "task": task,
            "failed_code": samples[best],
            "feedback": feedback,
            "messages": messages + [{"role": "assistant", "content": samples[best]},
                                    {"role": "user", "content": repair}],
        })
        return True

    def next_repair_prompts(self, k):
        """k seeded draws; each pops the oldest entry with probability reissue_prob. The popped entries, oldest
        first (fewer than k, none when the buffer is empty or the draws say so)."""
        if not isinstance(k, int) or k < 0:
            raise ValueError(f"k is an int >= 0, not {k!r}")
        out = []
        for _ in range(k):
            if self._random.random() < self.reissue_prob and self._entries:
                out.append(self._entries.popleft())
        return out
