"""What the client and adapter tests share: the real `anvil serve` on the cpu backend."""

import os
import signal
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def anvil_bin():
    path = os.environ.get("ANVIL_BIN") or str(ROOT / "build" / "anvil")
    if not os.path.exists(path):
        pytest.fail(f"anvil binary not found at {path}; build first (scripts/setup.sh)")
    return path


@pytest.fixture
def service(tmp_path):
    cache = os.environ.get("ANVIL_TEST_CACHE") or str(Path(anvil_bin()).parent / "test-cache")
    proc = subprocess.Popen([anvil_bin(), "serve", "--port", "0", "--cache-dir", cache, "--work-dir",
                             str(tmp_path / "work"), "--timeout", "3", "--no-verdict-cache", "-q"],
                            stdout=subprocess.PIPE, stderr=open(tmp_path / "serve.err", "w"), text=True)
    line = proc.stdout.readline()
    assert "listening on" in line, (tmp_path / "serve.err").read_text()
    yield line.split()[-1]
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 0
