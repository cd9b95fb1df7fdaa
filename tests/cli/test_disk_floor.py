"""The machine's failures are never the candidate's (issue 35): a disk below anvil's free-space floor (the smaller
of 1 GiB and 10 % of it) starts no job there. Its candidates get `infra_error` naming the disk before anything is
written, and once there is room again the same candidate is judged as usual. The cache sits on a 256 MiB tmpfs of
the test's own (mounted as root; where mounting is not allowed the test skips, saying so): another filesystem than
the temporary folder's, where a prepared task is made, so publishing it there is a copy (it was a failed rename,
EXDEV, and `anvil eval` exited 2)."""

import json
import os
import subprocess

import pytest

from conftest import EXAMPLES, load_schema, run_anvil, validate

RELU = str(EXAMPLES / "tasks" / "relu.py")
HONEST = str(EXAMPLES / "candidates" / "relu" / "pass_native.cpp")


def judge(cache):
    """`anvil eval --json` with this cache folder (conftest's eval_json names the tests' shared one)."""
    proc = run_anvil("eval", "--json", "-q", "-t", RELU, "-c", HONEST, "-b", "cpu", "--no-perf", "--cache-dir", str(cache))
    v = json.loads(proc.stdout)
    validate(v, load_schema())
    return v, proc


@pytest.fixture
def small_disk(tmp_path):
    mount = tmp_path / "disk"
    mount.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256m", "anvil-test-disk", str(mount)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip("cannot mount a tmpfs here: " + proc.stderr.strip())
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_disk_below_its_floor_starts_no_job_and_blames_no_candidate(small_disk):
    filler = small_disk / "filler"
    # 256 MiB, floor 25.6 MiB: leave 10 MiB.
    with open(filler, "wb") as f:
        f.write(b"\0" * (246 << 20))
    cache = small_disk / "cache"
    v, proc = judge(cache)
    assert v["status"] == "infra_error", v
    assert "under anvil's floor of 25 MiB" in v["error"] and str(cache) in v["error"], v["error"]
    assert "anvil cache prune" in v["error"]
    assert not cache.exists() or not any(cache.rglob("*.so"))  # Nothing was built there.
    # Room again: the same candidate is judged as usual.
    os.remove(filler)
    v, proc = judge(cache)
    assert v["status"] == "pass", v["feedback"] + proc.stderr
