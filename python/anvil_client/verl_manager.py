"""verl's reward-loop manager for anvil's reward service (docs/service.md, "verl").

    reward:
      reward_manager:
        source: importlib
        name: AnvilRewardManager
        module: {path: /path/to/anvil/python/anvil_client/verl_manager.py}
      custom_reward_function:
        reward_kwargs: {anvil_url: "http://127.0.0.1:8000", backend: cuda, candidate_format: kernelbench}

Where `compute_score` (verl.py) makes one HTTP exchange per sample, held open until its verdict, this manager
gathers the samples a reward-loop worker scores at once (verl gathers `run_single` over its whole chunk, a GRPO
group and more) into one `POST /v1/jobs` and awaits them with long-polls of many ids: the service sees the group
together and a worker holds two connections, not hundreds. Each sample answers what compute_score answers: its
reward and the same flat keys in `reward_extra_info` (`anvil_infra_error: 1` when the machine, not the candidate,
failed: keep that sample out of learning). A sample without code (`no_code`, ...) answers −1 without a job.

Settings: `reward_kwargs` as for compute_score (anvil_url, token_file, backend, candidate_format, policy, trials,
timeout_s, max_concurrency, retries; each also from $ANVIL_URL, $ANVIL_BACKEND, ...), plus `batch_window_s` (default 0.05):
how long a batch waits for more samples before it is posted.

Imports verl (this file is loaded by verl, in verl's process); the rest of anvil_client needs the standard library
alone.
"""

import asyncio
import sys
import uuid
from pathlib import Path

from verl.experimental.reward_loop.reward_manager.base import RewardManagerBase

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from anvil_client.client import CONFIG_ERRORS, AsyncClient, ServiceError  # noqa: E402
from anvil_client.verl import _setting, result, task_fields  # noqa: E402

# A 4xx naming a field of one job of a batch, e.g. jobs[3].response: that job alone is refused.
_JOB_FIELD = "jobs["


class _Batcher:
    """Samples of one event loop posted together: the first to arrive opens a batch, which is posted
    `window_s` later with every sample that came meanwhile (at most 1,024)."""

    def __init__(self, client, options, window_s, timeout_s):
        self.client, self.options, self.window_s, self.timeout_s = client, options, window_s, timeout_s
        self.pending = []  # (request, future)
        self.flush_task = None

    async def score(self, response, ground_truth):
        future = asyncio.get_running_loop().create_future()
        self.pending.append(({"candidate_source": None, "response": response, **task_fields(ground_truth),
                              **self.options}, future))
        if len(self.pending) >= 1024:
            self._flush_now()
        elif self.flush_task is None:
            self.flush_task = asyncio.ensure_future(self._flush_later())
        try:
            return await asyncio.wait_for(asyncio.shield(future), self.timeout_s)
        except asyncio.TimeoutError:
            return result(infra=True)  # Its job goes on; this sample answers flagged, within verl's timeout.

    async def _flush_later(self):
        await asyncio.sleep(self.window_s)
        self.flush_task = None
        self._flush_now()

    def _flush_now(self):
        batch, self.pending = self.pending, []
        if self.flush_task is not None:
            self.flush_task.cancel()
            self.flush_task = None
        if batch:
            asyncio.ensure_future(self._run(batch))

    async def _run(self, batch):
        try:
            while batch:
                try:
                    ids = await self.client.submit([r for r, _ in batch], idempotency_key=uuid.uuid4().hex)
                    break
                except ServiceError as e:
                    i = _refused_job(e, len(batch))
                    if i is None:
                        raise
                    # One sample refused (no code, cut at the token limit, ...): it answers its outcome, the rest
                    # go again.
                    _, future = batch.pop(i)
                    _settle(future, result(outcome=e.outcome or "refused"))
            if not batch:
                return
            verdicts = await self.client.wait_jobs(ids)
            for (_, future), verdict in zip(batch, verdicts):
                _settle(future, result(verdict))
        except ServiceError as e:
            if e.status in CONFIG_ERRORS:
                for _, future in batch:  # A configuration the user must fix: verl reports it.
                    if not future.done():
                        future.set_exception(e)
                return
            for _, future in batch:
                _settle(future, result(infra=True))
        except (OSError, asyncio.TimeoutError, ValueError, KeyError):
            for _, future in batch:
                _settle(future, result(infra=True))


def _refused_job(error, n):
    """The index of the one job a 4xx names (`jobs[i]...`), when it has an outcome; else None."""
    if error.status not in (400, 413, 422) or not error.field.startswith(_JOB_FIELD) or not error.outcome:
        return None
    try:
        i = int(error.field[len(_JOB_FIELD):].split("]", 1)[0])
    except ValueError:
        return None
    return i if 0 <= i < n else None


def _settle(future, value):
    if not future.done():
        future.set_result(value)


class AnvilRewardManager(RewardManagerBase):
    """Scores each sample with anvil's verdict on the code in its response (see the module's docstring)."""

    def __init__(self, config, tokenizer, compute_score=None, reward_router_address=None,
                 reward_model_tokenizer=None, **kwargs):
        super().__init__(config, tokenizer, compute_score)
        custom = config.reward.get("custom_reward_function") or {}
        self.settings = {**dict(custom.get("reward_kwargs") or {}), **kwargs}
        self._batchers = {}

    def _batcher(self):
        loop = asyncio.get_running_loop()
        if loop not in self._batchers:
            s = self.settings
            client = AsyncClient(_setting(s, "anvil_url", "http://127.0.0.1:8000"), token_file=_setting(s, "token_file"),
                                 max_concurrency=int(_setting(s, "max_concurrency", 64)),
                                 retries=int(_setting(s, "retries", 10)))
            options = {"candidate_format": _setting(s, "candidate_format", "kernelbench"),
                       "backend": _setting(s, "backend", "cuda"), "policy": _setting(s, "policy"),
                       "trials": s.get("trials")}
            self._batchers[loop] = _Batcher(client, {k: v for k, v in options.items() if v is not None},
                                            float(_setting(s, "batch_window_s", 0.05)),
                                            float(_setting(s, "timeout_s", 280)))
        return self._batchers[loop]

    async def run_single(self, data):
        item = data[-1:][0]  # With several sequences, the last one is scored (as verl's own managers do).
        responses = item.batch["responses"]
        length = int(item.batch["attention_mask"][-responses.shape[-1]:].sum())
        ids = responses[:length]
        text = await asyncio.get_running_loop().run_in_executor(
            None, lambda: self.tokenizer.decode(ids, skip_special_tokens=True))
        ground_truth = item.non_tensor_batch["reward_model"]["ground_truth"]
        scores = await self._batcher().score(text, ground_truth)
        return {"reward_score": scores["score"], "reward_extra_info": scores}
