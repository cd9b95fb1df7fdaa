"""slime.utils.http_utils.post at 624b824a: a POST of JSON, answered as JSON (see ../../README.md)."""

import asyncio
import json
import urllib.request


async def post(url, payload, max_retries=60, headers=None):
    def call():
        request = urllib.request.Request(url, data=json.dumps(payload).encode(), method="POST",
                                         headers={"Content-Type": "application/json", **(headers or {})})
        with urllib.request.urlopen(request, timeout=60) as answer:
            return json.loads(answer.read())

    return await asyncio.to_thread(call)
