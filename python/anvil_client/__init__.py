"""A client of anvil's reward service (`anvil serve`, docs/service.md): the standard library alone, asyncio.

    from anvil_client import AsyncClient
    client = AsyncClient("http://127.0.0.1:8000", token_file="client.token", max_concurrency=64)
    verdict = await client.evaluate(task_source=text, candidate_source=code, candidate_format="kernelbench")

Trainer adapters build on it (verl first: anvil_client.verl).
"""

from anvil_client.client import AsyncClient, ServiceError, STATUS_CODES

__all__ = ["AsyncClient", "ServiceError", "STATUS_CODES"]
