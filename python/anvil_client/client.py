"""The reward service's client: requests with a concurrency limit, retried when the service says so (429, 503 with
Retry-After) or when the connection fails; never when a request is refused (4xx): that is the caller's to fix. A
synchronous verdict whose deadline passed (503 with a job id) is awaited as a job, not asked again. Standard library
only: HTTP/1.1 over asyncio streams."""

import asyncio
import json
import random
import urllib.parse

# A verdict's status as a small integer, for trainers that log numbers only.
STATUS_CODES = {"pass": 0, "compile_error": 1, "runtime_error": 2, "timeout": 3, "wrong_answer": 4, "cheat": 5,
                "infra_error": 6, "no_code": 7, "truncated": 8, "refused": 9}
# Answers that say the request itself is wrong (a configuration the user must fix): adapters raise them, never score.
CONFIG_ERRORS = (400, 401, 403, 404, 413, 415, 422)


class ServiceError(Exception):
    """The service refused a request (`status`, `field`, `message` from its JSON error), or could not be reached."""

    def __init__(self, status, message, field="", outcome=""):
        super().__init__(f"{status}: {field + ': ' if field else ''}{message}")
        self.status, self.field, self.message = status, field, message
        self.outcome = outcome  # A model answer's own outcome (no_code, truncated, refused), with 422.


def _token(token, token_file):
    if token_file:
        with open(token_file) as f:
            return f.read().strip()
    return token or ""


class AsyncClient:
    """One service. `max_concurrency` requests at once (a semaphore per client); `retries` more tries for a request
    the service was too busy for or a connection that failed, waiting as `Retry-After` says, else backing off
    exponentially from `backoff_s` (with jitter) up to `max_backoff_s`. `timeout_s` bounds each HTTP exchange."""

    def __init__(self, url="http://127.0.0.1:8000", token=None, token_file=None, max_concurrency=64, retries=10,
                 backoff_s=0.5, max_backoff_s=30.0, timeout_s=3700.0):
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ValueError(f"not an http(s) URL: {url!r}")
        self.host, self.ssl = parsed.hostname, parsed.scheme == "https"
        self.port = parsed.port or (443 if self.ssl else 80)
        self.base = parsed.path.rstrip("/")
        self.token = _token(token, token_file)
        self.retries, self.backoff_s, self.max_backoff_s, self.timeout_s = retries, backoff_s, max_backoff_s, timeout_s
        self.max_concurrency = max_concurrency
        self._semaphore = None  # Made in the running loop.

    # --- the API ---

    async def evaluate(self, candidate_source, candidate_format, backend="cpu", task_source=None, task_hash=None,
                       deadline_s=None, wait_past_deadline=True, **options):
        """The verdict (a dict, docs/verdict.md) of one candidate. `options`: sidecar, policy, reward, trials, or
        response (a model's whole answer, with candidate_source None: the service extracts its code). Without
        `deadline_s` it waits however long the verdict takes; past it, the job is awaited, or with
        `wait_past_deadline=False` None is returned (the job goes on)."""
        body = self._request_body(candidate_source, candidate_format, backend, task_source, task_hash, options)
        if deadline_s is not None:
            body["deadline_s"] = deadline_s
        status, answer = await self._call("POST", "/v1/evaluate", body, retry_deadline=True)
        if status == 200:
            return answer["verdict"]
        return await self.wait_job(answer["job_id"]) if wait_past_deadline else None

    async def submit(self, requests, idempotency_key=None):
        """Posts jobs (each a dict as `evaluate` takes: candidate_source, candidate_format, backend, task_source or
        task_hash, options); their ids in order. With an idempotency key, a retry after a lost answer makes none
        twice."""
        body = {"jobs": [self._request_body(r["candidate_source"], r["candidate_format"], r.get("backend", "cpu"),
                                            r.get("task_source"), r.get("task_hash"),
                                            {k: v for k, v in r.items() if k not in (
                                                "candidate_source", "candidate_format", "backend", "task_source",
                                                "task_hash")}) for r in requests]}
        if idempotency_key:
            body["idempotency_key"] = idempotency_key
        _, answer = await self._call("POST", "/v1/jobs", body)
        return answer["job_ids"]

    async def job(self, job_id, wait_s=0):
        """{"job_id", "state", "verdict"?}, waiting up to `wait_s` (at most 60) for it to finish."""
        _, answer = await self._call("GET", f"/v1/jobs/{job_id}?wait={wait_s:g}")
        return answer

    async def wait_job(self, job_id):
        """The verdict of a job, however long it takes; ServiceError if it was cancelled."""
        while True:
            answer = await self.job(job_id, wait_s=60)
            if answer["state"] == "done":
                return answer["verdict"]
            if answer["state"] == "cancelled":
                raise ServiceError(409, f"job {job_id} was cancelled")

    async def wait_jobs(self, job_ids):
        """The verdicts of several jobs, in order (long-polls of up to 1,024 ids each)."""
        verdicts = {}
        pending = list(dict.fromkeys(job_ids))
        while pending:
            chunk = pending[:1024]
            _, answer = await self._call("GET", "/v1/jobs?ids=" + ",".join(chunk) + "&wait=60")
            for j in answer["jobs"]:
                if j["state"] == "done":
                    verdicts[j["job_id"]] = j["verdict"]
                elif j["state"] == "cancelled":
                    raise ServiceError(409, f"job {j['job_id']} was cancelled")
            pending = [i for i in pending if i not in verdicts]
        return [verdicts[i] for i in job_ids]

    async def cancel(self, job_id):
        _, answer = await self._call("DELETE", f"/v1/jobs/{job_id}")
        return answer

    async def register_task(self, task_source):
        """The hash of a task's text, stored by the service (the admin token)."""
        _, answer = await self._call("POST", "/v1/tasks", {"task_source": task_source})
        return answer["task_hash"]

    async def health(self):
        _, answer = await self._call("GET", "/healthz")
        return answer

    # --- HTTP ---

    @staticmethod
    def _request_body(candidate_source, candidate_format, backend, task_source, task_hash, options):
        if (task_source is None) == (task_hash is None):
            raise ValueError("give exactly one of task_source and task_hash")
        body = {"candidate_format": candidate_format, "backend": backend}
        if candidate_source is not None:
            body["candidate_source"] = candidate_source
        if task_source is not None:
            body["task_source"] = task_source
        else:
            body["task_hash"] = task_hash
        body.update({k: v for k, v in options.items() if v is not None})
        return body

    async def _call(self, method, path, body=None, retry_deadline=False):
        """(status, JSON answer). Retries 429 and 503 (but a 503 with a job id when `retry_deadline`: the caller
        awaits the job) and failed connections; raises ServiceError for the rest."""
        if self._semaphore is None:
            self._semaphore = asyncio.Semaphore(self.max_concurrency)
        attempt = 0
        while True:
            try:
                async with self._semaphore:
                    status, headers, text = await asyncio.wait_for(self._exchange(method, path, body),
                                                                   self.timeout_s)
            except (OSError, asyncio.IncompleteReadError, asyncio.TimeoutError, ConnectionError) as e:
                if attempt >= self.retries:
                    raise ServiceError(0, f"cannot reach {self.host}:{self.port}: {e!r}") from e
                attempt += 1
                await asyncio.sleep(self._backoff(attempt, None))
                continue
            try:
                answer = json.loads(text) if text else {}
            except json.JSONDecodeError:
                answer = {"error": {"field": "", "message": f"not JSON: {text[:200]!r}"}}
            if status < 400 or (status == 503 and retry_deadline and "job_id" in answer):
                return status, answer
            if status in (429, 503) and attempt < self.retries:
                attempt += 1
                await asyncio.sleep(self._backoff(attempt, headers.get("retry-after")))
                continue
            error = answer.get("error", {}) if isinstance(answer, dict) else {}
            raise ServiceError(status, error.get("message", text[:200]), error.get("field", ""),
                               answer.get("outcome", "") if isinstance(answer, dict) else "")

    def _backoff(self, attempt, retry_after):
        if retry_after:
            try:
                return min(float(retry_after), self.max_backoff_s) + random.uniform(0, 0.1)
            except ValueError:
                pass
        return min(self.backoff_s * 2 ** (attempt - 1), self.max_backoff_s) * random.uniform(0.5, 1.0)

    async def _exchange(self, method, path, body):
        reader, writer = await asyncio.open_connection(self.host, self.port, ssl=self.ssl or None)
        try:
            data = json.dumps(body).encode() if body is not None else b""
            lines = [f"{method} {self.base}{path} HTTP/1.1", f"Host: {self.host}:{self.port}", "Connection: close",
                     f"Content-Length: {len(data)}"]
            if body is not None:
                lines.append("Content-Type: application/json")
            if self.token:
                lines.append(f"Authorization: Bearer {self.token}")
            writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + data)
            await writer.drain()
            status_line = await reader.readline()
            parts = status_line.decode("latin-1").split(" ", 2)
            if len(parts) < 2 or not parts[1].isdigit():
                raise ConnectionError(f"not an HTTP answer: {status_line[:80]!r}")
            headers = {}
            while True:
                line = (await reader.readline()).decode("latin-1").rstrip("\r\n")
                if not line:
                    break
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            if "content-length" in headers:
                payload = await reader.readexactly(int(headers["content-length"]))
            else:
                payload = await reader.read()
            return int(parts[1]), headers, payload.decode("utf-8", "replace")
        finally:
            writer.close()
            try:
                await writer.wait_closed()
            except (OSError, ConnectionError):
                pass
