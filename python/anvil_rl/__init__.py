"""The RL parts of MusaCoder as exact functions a trainer calls (docs/rl.md): the reward of one verdict, PrimeEcho's
multi-turn reward and loss mask, the BDR repair buffer, MirrorPop's sequence filter, GRPO's group advantages, and
TIS and IcePop weights to compare MirrorPop with. The standard library only; inputs may be lists, tuples or numpy
arrays; no function keeps state but BDRBuffer.

    from anvil_rl import reward, prime_echo, grpo_advantages
    rewards = [prime_echo([reward(v) for v in turns], bonus_first=0.2, bonus_second=0.1) for turns in group]
    advantages = grpo_advantages(rewards)   # None (the machine's failures) stays None: mask those samples out

`None` is the machine's failure everywhere (an `infra_error` verdict, a model `server_error`): it carries no reward,
so a trainer must leave the sample out rather than learn from it."""

from anvil_rl.bdr import BDRBuffer
from anvil_rl.grpo import grpo_advantages
from anvil_rl.mirror_pop import icepop_weight, mirror_pop_keep, tis_weight
from anvil_rl.prime_echo import prime_echo, prime_echo_loss_mask
from anvil_rl.repair import repair_message
from anvil_rl.reward import reward

__all__ = ["reward", "prime_echo", "prime_echo_loss_mask", "BDRBuffer", "mirror_pop_keep", "grpo_advantages",
           "tis_weight", "icepop_weight", "repair_message"]
