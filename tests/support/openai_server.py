"""A model server for tests: speaks the OpenAI chat-completions protocol over real HTTP, with scripted answers.

    python3 tests/support/openai_server.py --script SCRIPT.json [--log REQUESTS.jsonl] [--port 0]

It prints `listening http://127.0.0.1:PORT/v1` once it accepts connections, and serves until killed.

The script is {"rules": [{"match": TEXT, "answers": [STEP, ...]}, ...]}. A request goes to the first rule whose
`match` (absent: any) is in its last message's content, whose `context` (absent: any) is in one of its messages, and
whose `turn` (absent: any) is the number of user messages it holds; each request takes the rule's next step, and the
last one repeats once the others are used. A step is one answer:
  {"content": "...", "finish_reason": "stop", "reasoning": "..."}   a chat completion (usage counted in words; with
                                                                     logprobs/return_token_ids asked, one token a word)
  {"refusal": "..."}                                                 a refusal (content null)
  {"status": 429, "headers": {"Retry-After": "1"}, "body": "..."}   any status; body default: an OpenAI error object
  {"raw": "<html>...</html>"}                                        a 200 whose body is this text
  {"drop": true}                                                     the connection closed without an answer
  {"delay": 2.5, ...}                                                 any of the above, that many seconds later
A request with "n" > 1 takes n steps, one choice each (the first step's delay, status, raw or drop answers for all).
A top-level {"faults": {"rate": 0.05, "seed": 1}} replaces that share of the answers, at random, with a 500, a 200
that is not JSON, or a dropped connection (the step is used up all the same).
Every request is appended to the log as one JSON line: {"path", "authorization", "body"} (body parsed when JSON).
Standard library only."""

import argparse
import json
import random
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Script:
    FAULTS = ({"status": 500, "body": json.dumps({"error": {"message": "injected fault"}})},
              {"raw": "<html>injected fault</html>"}, {"drop": True})

    def __init__(self, spec):
        self.rules = spec["rules"]
        self.next = [0] * len(self.rules)
        self.lock = threading.Lock()
        faults = spec.get("faults") or {}
        self.fault_rate = faults.get("rate", 0.0)
        self.random = random.Random(faults.get("seed", 0))

    def step_for(self, messages):
        text = str(messages[-1].get("content", ""))
        turn = sum(1 for m in messages if m.get("role") == "user")
        with self.lock:
            for i, rule in enumerate(self.rules):
                if rule.get("match") is not None and rule["match"] not in text:
                    continue
                if rule.get("turn") is not None and rule["turn"] != turn:
                    continue
                if rule.get("context") is not None and not any(rule["context"] in str(m.get("content", ""))
                                                               for m in messages):
                    continue
                answers = rule["answers"]
                step = answers[min(self.next[i], len(answers) - 1)]
                self.next[i] += 1
                if self.fault_rate and self.random.random() < self.fault_rate:
                    return self.random.choice(self.FAULTS)
                return step
        return {"status": 500, "body": json.dumps({"error": {"message": "the test script has no rule for this"}})}


def choice_of(step, request, index):
    content = step.get("content")
    message = {"role": "assistant", "content": content}
    if "refusal" in step:
        message = {"role": "assistant", "content": None, "refusal": step["refusal"]}
    if "reasoning" in step:
        message["reasoning_content"] = step["reasoning"]
    choice = {"index": index, "message": message, "finish_reason": step.get("finish_reason", "stop")}
    words = (content or "").split()
    if request.get("logprobs"):  # One "token" per word, log-prob -0.5 each (a test's numbers, not a model's).
        choice["logprobs"] = {"content": [{"token": w, "logprob": -0.5, "bytes": list(w.encode()), "top_logprobs": []}
                                          for w in words]}
    if request.get("return_token_ids"):
        choice["token_ids"] = list(range(1, len(words) + 1))
    return choice, len((content or step.get("refusal", "")).split())


def completion(steps, request):
    choices, completion_words = [], 0
    for i, step in enumerate(steps):
        choice, words = choice_of(step, request, i)
        choices.append(choice)
        completion_words += words
    prompt_words = sum(len(str(m.get("content", "")).split()) for m in request.get("messages", []))
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": steps[0].get("model", request.get("model", "test-model")),
        "choices": choices,
        "usage": steps[0].get("usage", {"prompt_tokens": prompt_words, "completion_tokens": completion_words,
                                        "total_tokens": prompt_words + completion_words}),
    }


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    script = None
    log_path = None
    log_lock = threading.Lock()

    def log_message(self, *args):  # Quiet: the log file is the record.
        pass

    def send(self, status, body, headers=None, content_type="application/json"):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, str(v))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path.rstrip("/").endswith("/models"):
            self.send(200, json.dumps({"object": "list", "data": [{"id": "test-model", "object": "model"}]}))
        else:
            self.send(404, json.dumps({"error": {"message": f"no route {self.path}"}}))

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        try:
            request = json.loads(raw)
        except ValueError:
            request = raw.decode(errors="replace")
        if self.log_path:
            with self.log_lock, open(self.log_path, "a") as f:
                f.write(json.dumps({"path": self.path, "authorization": self.headers.get("Authorization"),
                                    "body": request}) + "\n")
        if not self.path.rstrip("/").endswith("/chat/completions") or not isinstance(request, dict):
            self.send(404 if isinstance(request, dict) else 400,
                      json.dumps({"error": {"message": f"not a chat completion request: {self.path}"}}))
            return
        messages = request.get("messages") or [{}]
        messages = [m if isinstance(m, dict) else {} for m in messages]
        n = request.get("n") if isinstance(request.get("n"), int) and request.get("n") > 1 else 1
        steps = [self.script.step_for(messages) for _ in range(n)]
        step = steps[0]
        time.sleep(step.get("delay", 0))
        if step.get("drop"):
            self.close_connection = True
            self.connection.shutdown(2)
            return
        if "raw" in step:
            self.send(step.get("status", 200), step["raw"], step.get("headers"), "text/html")
        elif "status" in step and step["status"] != 200:
            body = step.get("body", json.dumps({"error": {"message": f"scripted {step['status']}"}}))
            self.send(step["status"], body, step.get("headers"))
        else:
            self.send(200, json.dumps(completion(steps, request)), step.get("headers"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--script", required=True)
    parser.add_argument("--log")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    with open(args.script) as f:
        Handler.script = Script(json.load(f))
    Handler.log_path = args.log
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    print(f"listening http://127.0.0.1:{server.server_address[1]}/v1", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
