"""Runs anvil's verl estimator and policy loss (anvil_client/verl_algos.py) in .venv-verl, loaded the way a trainer
loads them: VERL_USE_EXTERNAL_MODULES=anvil_client.verl_algos makes verl import the module, and verl's registries
give the functions by name. For test_verl_agent_loop.py.

    python verl_algos.py SPEC.json  ->  one JSON object on stdout

SPEC: {"estimator": {"rewards": [...], "masks": [[...], ...], "index": [...]},
       "loss": {"old": [[...]], "new": [[...]], "rollout": [[...]], "advantages": [[...]], "mask": [[...]]}}"""

import json
import sys
from pathlib import Path

import numpy as np
import torch
from omegaconf import OmegaConf
from verl.trainer.ppo.core_algos import get_adv_estimator_fn, get_policy_loss_fn


def main():
    spec = json.loads(Path(sys.argv[1]).read_text())
    out = {}
    e = spec["estimator"]
    mask = torch.tensor(e["masks"], dtype=torch.float32)
    rewards = torch.zeros_like(mask)
    for i, r in enumerate(e["rewards"]):  # On the last token, as verl places a sequence's score.
        rewards[i, -1] = r
    advantages, returns = get_adv_estimator_fn("anvil_grpo")(
        token_level_rewards=rewards, response_mask=mask, index=np.array(e["index"], dtype=object), config=None)
    out["advantages"] = advantages.tolist()
    out["same_returns"] = bool(torch.equal(advantages, returns))

    lo = spec["loss"]
    config = OmegaConf.create({"clip_ratio": 0.2, "clip_ratio_low": 0.2, "clip_ratio_high": 0.2, "clip_ratio_c": 3.0,
                               "global_batch_info": {}})
    old, new, rollout = (torch.tensor(lo[k], dtype=torch.float32) for k in ("old", "new", "rollout"))
    adv, lmask = torch.tensor(lo["advantages"]), torch.tensor(lo["mask"], dtype=torch.bool)
    weights = torch.exp(old - rollout) * lmask  # verl's token-level rollout-correction weights, untruncated.
    loss, metrics = get_policy_loss_fn("anvil_mirror_pop")(old, new, adv, lmask, "token-mean", config, weights)
    out["loss"], out["dropped"] = float(loss), metrics["actor/anvil_mirror_pop_dropped"]
    # verl's own loss over the rows MirrorPop should keep (the test names them), for comparison.
    keep = torch.tensor(lo["expect_kept"], dtype=torch.bool).unsqueeze(-1)
    vanilla, _ = get_policy_loss_fn("vanilla")(old, new, adv, lmask & keep, "token-mean", config, None)
    out["vanilla_on_kept"] = float(vanilla)
    try:
        get_policy_loss_fn("anvil_mirror_pop")(old, new, adv, lmask, "token-mean", config, None)
    except ValueError as err:
        out["without_weights"] = str(err)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
