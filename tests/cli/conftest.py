"""Shared helpers for the black-box CLI tests: run the real `anvil` binary as a user would."""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
BAD_TASKS = ROOT / "tests" / "data" / "bad_tasks"


def anvil_bin():
    path = os.environ.get("ANVIL_BIN") or str(ROOT / "build" / "anvil")
    if not os.path.exists(path):
        pytest.fail(f"anvil binary not found at {path}; build first (scripts/setup.sh)")
    return path


def cache_dir():
    # Shared by the CLI test files of one build so each C++ extension compiles once per CI run.
    path = os.environ.get("ANVIL_TEST_CACHE") or str(Path(anvil_bin()).parent / "test-cache")
    os.makedirs(path, exist_ok=True)
    return path


def run_anvil(*args, env=None, timeout=1200):
    full_env = dict(os.environ)
    full_env.update(env or {})
    proc = subprocess.run([anvil_bin(), *args], capture_output=True, text=True, env=full_env, timeout=timeout)
    return proc


def eval_json(*args, env=None, timeout=1200):
    """Runs `anvil eval --json` and returns (verdicts, process). Every verdict is checked against
    docs/verdict.schema.json first: whatever a test asserts, what it was given holds to the contract."""
    proc = run_anvil("eval", "--json", "--cache-dir", cache_dir(), "-q", *args, env=env, timeout=timeout)
    text = proc.stdout.strip()
    if not text:
        return [], proc
    try:
        verdicts = [json.loads(text)]  # One verdict, pretty-printed.
    except json.JSONDecodeError:
        verdicts = [json.loads(line) for line in text.splitlines() if line.strip()]
    for v in verdicts:
        validate(v, load_schema())
    return verdicts, proc


_SCHEMA = []


def load_schema():
    if not _SCHEMA:
        with open(ROOT / "docs" / "verdict.schema.json") as f:
            _SCHEMA.append(json.load(f))
    return _SCHEMA[0]


@pytest.fixture(scope="session")
def schema():
    return load_schema()


def validate(verdict, schema):
    import jsonschema
    jsonschema.validate(verdict, schema)


SERVER = ROOT / "tests" / "support" / "openai_server.py"
# No key of the machine's own may reach the server unless a test puts it there.
NO_KEYS = {"ANVIL_OPENAI_API_KEY": "", "OPENAI_API_KEY": "", "ANVIL_OPENAI_BASE_URL": "", "OPENAI_BASE_URL": ""}


class ModelServer:
    """tests/support/openai_server.py with scripted answers, its request log, stopped by stop()."""

    def __init__(self, tmp_path, answers, rules=(), faults=None):
        """`rules` ({"match": TEXT, "answers": [...]}) come before the rule of `answers`, which takes the rest;
        `faults` ({"rate", "seed"}) replaces that share of the answers with server failures."""
        folder = Path(tempfile.mkdtemp(prefix="model-server-", dir=tmp_path))
        self.script = folder / "script.json"
        self.script.write_text(json.dumps({"rules": [*rules, {"answers": answers}], "faults": faults}))
        self.log = folder / "requests.jsonl"
        self.proc = subprocess.Popen([sys.executable, str(SERVER), "--script", str(self.script), "--log",
                                      str(self.log)], stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        assert line.startswith("listening "), line
        self.url = line.split()[1]

    def requests(self):
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def stop(self):
        self.proc.kill()
        self.proc.wait(timeout=10)
