"""A client of anvil's reward service (`anvil serve`, docs/service.md): the standard library alone, asyncio.

    from anvil_client import AsyncClient
    client = AsyncClient("http://127.0.0.1:8000", token_file="client.token", max_concurrency=64)
    verdict = await client.evaluate(task_source=text, candidate_source=code, candidate_format="kernelbench")

Trainer adapters build on it: verl's reward function and reward-loop manager (anvil_client.verl, verl_manager), its
multi-turn agent loop, advantage estimator and MirrorPop policy loss (verl_agent_loop, verl_algos: docs/rl.md),
slime's and OpenRLHF's reward hooks (anvil_client.slime). Those modules import their trainer; this one does not.
"""

from anvil_client.client import AsyncClient, ServiceError, STATUS_CODES

__all__ = ["AsyncClient", "ServiceError", "STATUS_CODES"]
