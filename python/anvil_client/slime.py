"""slime's custom reward model, answered by anvil's reward service (docs/service.md, "slime").

    --custom-rm-path anvil_client.slime.custom_rm --reward-key score     (python/ on PYTHONPATH)
    --group-rm                                                            (optional: a group at once)

slime awaits `custom_rm(args, sample)` per sample, or `custom_rm(args, samples)` with --group-rm. `sample.response`
is the model's answer (the service extracts its code); `sample.label` is the task's sha256 (POST /v1/tasks) or its
text (taken by a loopback service). Each sample answers a dict of the same flat keys as the verl adapter (`score`:
reduce it with --reward-key score); a sample without a verdict in time, or whose service could not be reached,
answers `anvil_infra_error: 1` with score 0 — flagged, never a silent 0.

Settings from the environment (slime's args hold none of ours): $ANVIL_URL, $ANVIL_TOKEN_FILE, $ANVIL_BACKEND,
$ANVIL_CANDIDATE_FORMAT, $ANVIL_POLICY, $ANVIL_TIMEOUT_S (default 110), $ANVIL_MAX_CONCURRENCY.

Without a Python hook, slime's own remote_rm can post to the service: --rm-type remote_rm --rm-url
http://HOST:PORT/v1/compat/slime[/TOKEN] (it sends {prompt, response, label} and reads the body as the reward).
"""

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from anvil_client import verl as _flat  # noqa: E402  The flat keys and the service call are the verl adapter's.


async def _one(sample):
    response = sample.response if isinstance(sample.response, str) else str(sample.response)
    return await _flat.compute_score(None, response, sample.label, None,
                                     timeout_s=_flat._setting({}, "timeout_s", 110))


async def custom_rm(args, sample, **kwargs):
    """One sample's reward dict, or with --group-rm (a list of samples) one dict per sample, in order."""
    if isinstance(sample, (list, tuple)):
        return list(await asyncio.gather(*[_one(s) for s in sample]))
    return await _one(sample)
