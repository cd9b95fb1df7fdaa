"""The machine's failures are never the candidate's (issue 35): a disk below anvil's free-space floor (the smaller
of 1 GiB and 10 % of it) starts no job there. Its candidates get `infra_error` naming the disk before anything is
written, and once there is room again the same candidate is judged as usual. The cache sits on a 256 MiB tmpfs of
the test's own (mounted as root; where mounting is not allowed the test skips, saying so): another filesystem than
the temporary folder's, where a prepared task is made, so publishing it there is a copy (it was a failed rename,
EXDEV, and `anvil eval` exited 2)."""

import json
import os
import shutil
import time
import subprocess
from pathlib import Path

import pytest

from conftest import EXAMPLES, ROOT, load_schema, run_anvil, validate

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
    assert v["reward"] is None and "infra_retries" not in v  # Decided before the candidate ran: not tried again.
    assert not cache.exists() or not any(cache.rglob("*.so"))  # Nothing was built there.
    # Room again: the same candidate is judged as usual.
    os.remove(filler)
    v, proc = judge(cache)
    assert v["status"] == "pass", v["feedback"] + proc.stderr


BIG_RELU = '''# anvil-task: ReLU on 2048 x 1024 float32 (8 MiB a tensor): its trials outgrow the test's small disk
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(2048, 1024)]


def get_init_inputs():
    return []
'''


# 48 MiB of weights (a buffer the forward does not need): more than the test leaves of its small disk.
HEAVY_RELU = BIG_RELU.replace("(8 MiB a tensor): its trials outgrow the test's small disk",
                              "with 48 MiB of state").replace(
    """class Model(nn.Module):
""", """class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("unused", torch.ones(12 << 20))

""")
# Init inputs whose record (spec.json keeps them) outgrows what the test leaves of its small disk.
WORDY_RELU = BIG_RELU.replace("(8 MiB a tensor): its trials outgrow the test's small disk",
                              "with 6 million init inputs: their record outgrows the test's small disk").replace(
    """class Model(nn.Module):
""", """class Model(nn.Module):
    def __init__(self, table):
        super().__init__()

""").replace("def get_init_inputs():\n    return []", "def get_init_inputs():\n    return [list(range(6_000_000))]")


def test_a_disk_that_fills_while_the_task_is_prepared_is_the_machines_failure(small_disk, tmp_path):
    """Above the floor when the job starts (40 MiB left), the disk fills while the task worker records the task's
    spec (its init inputs: 50 MB): an infra_error verdict naming the disk, not `anvil eval` exiting 2 ("the task
    worker failed"), and nothing of the half-made task left behind; with room again the same task is judged. The
    trials and the weights never take room there: 5 x 16 MiB of trials stay with the task server, 48 MiB of weights
    with the server's reference, and the same full disk judges those tasks."""
    assert "6_000_000" in WORDY_RELU and "12 << 20" in HEAVY_RELU
    (tmp_path / "big_relu.py").write_text(BIG_RELU)
    (tmp_path / "heavy_relu.py").write_text(HEAVY_RELU)
    (tmp_path / "wordy_relu.py").write_text(WORDY_RELU)
    # The honest ReLU, taking the buffer after its input (docs/native-abi.md) and leaving it.
    heavy_honest = tmp_path / "heavy_native.cpp"
    heavy_honest.write_text(Path(HONEST).read_text().replace("if (n_in != 1 ||", "if (n_in < 1 ||"))
    cache, scratch = small_disk / "cache", small_disk / "tmp"
    scratch.mkdir()
    env = {"TMPDIR": str(scratch)}

    def judge_task(task, candidate=HONEST):
        proc = run_anvil("eval", "--json", "-q", "-t", str(task), "-c", str(candidate), "-b", "cpu",
                         "--no-perf", "--cache-dir", str(cache), env=env)
        assert proc.returncode != 2, proc.stderr
        v = json.loads(proc.stdout)
        validate(v, load_schema())
        return v, proc

    # The candidates are built first (the relu task, room to spare), so only the preparation meets the full disk.
    assert judge(cache)[0]["status"] == "pass"
    assert judge_task(RELU, heavy_honest)[0]["status"] == "pass"
    filler = small_disk / "filler"
    with open(filler, "wb") as f:
        f.write(b"\0" * (256 - 40 - sum(p.stat().st_size for p in small_disk.rglob("*") if p.is_file()) // (1 << 20)
                         << 20))
    v, proc = judge_task(tmp_path / "big_relu.py")
    assert v["status"] == "pass" and v["gates"]["run"]["trial_data"] == "server", v["feedback"] + proc.stderr
    v, proc = judge_task(tmp_path / "heavy_relu.py", heavy_honest)
    assert v["status"] == "pass", v["feedback"] + proc.stderr
    v, proc = judge_task(tmp_path / "wordy_relu.py")
    assert v["status"] == "infra_error", v
    assert "ran out of room while anvil prepared the task" in v["error"], v["error"]
    assert v["reward"] is None and "infra_retries" not in v
    assert not list(scratch.glob("anvil-*")), list(scratch.iterdir())  # The half-made task went.
    os.remove(filler)
    v, proc = judge_task(tmp_path / "wordy_relu.py")
    assert v["status"] == "pass", v["feedback"] + proc.stderr


def old_artifact(cache, key_char, mib, days=2):
    """A built artifact as anvil lays it out (src/cache/cache_scan.h), last used `days` ago."""
    key = key_char * 64
    entry = cache / "artifacts" / key
    entry.mkdir(parents=True)
    (entry / "complete").write_text("")
    with open(entry / "libcandidate.so", "wb") as f:
        f.write(b"\0" * (mib << 20))
    (cache / "artifacts" / "locks").mkdir(exist_ok=True)
    (cache / "artifacts" / "locks" / (key + ".lock")).write_text("")
    then = time.time() - days * 86400
    os.utime(entry, (then, then))
    return entry


def test_a_disk_below_its_floor_is_made_room_on_by_evicting_the_cache(small_disk):
    """The disk is a budget: old entries of the cache fill it past the floor; anvil evicts them, least recently used
    first, and judges the candidate, saying what it evicted. What the judge itself just used stays."""
    cache = small_disk / "cache"
    assert judge(cache)[0]["status"] == "pass"
    free_mib = shutil.disk_usage(small_disk).free >> 20
    older, old = [old_artifact(cache, c, (free_mib - 10) // 2, days) for c, days in (("a", 3), ("b", 2))]
    assert shutil.disk_usage(small_disk).free < 25 << 20  # Under the floor.
    v, proc = judge(cache)
    assert v["status"] == "pass", v["error"]
    assert not older.exists() and old.exists()  # The least recently used went; it made room enough.
    assert "evicted 1 entry, least recently used first" in proc.stderr, proc.stderr
    assert "under anvil's floor" in proc.stderr


def test_the_cache_stays_within_its_size_bound(small_disk):
    cache = small_disk / "cache"
    assert judge(cache)[0]["status"] == "pass"
    old = old_artifact(cache, "c", 64)
    proc = run_anvil("eval", "--json", "-q", "-t", RELU, "-c", HONEST, "-b", "cpu", "--no-perf", "--cache-dir",
                     str(cache), "--cache-max-size", "48M")
    assert json.loads(proc.stdout)["status"] == "pass"
    assert not old.exists()
    assert "over its bound of 48.0 MiB" in proc.stderr, proc.stderr
    assert any((cache / "artifacts").iterdir())  # What was used just now stays.


BIG_LIBRARY = ROOT / "tests" / "redteam" / "infra" / "big_library_native.cpp"


def test_a_build_too_big_for_the_disk_is_built_in_memory_and_its_copy_is_the_machines_failure(small_disk):
    """The candidate's build runs in memory (its compilers' pages count against their quota): the disk, above its
    floor but without room for a 40 MiB library, fails only anvil's copy into the cache, which is the machine's
    failure (infra_error, no reward) — where a compiler writing to the disk once made it a compile_error. Tried
    again, it fails the same while the health probe passes: with this candidate only, so it becomes
    runtime_error, suspect_candidate. With room, the same candidate passes."""
    cache = small_disk / "cache"
    assert judge(cache)[0]["status"] == "pass"
    filler = small_disk / "filler"
    with open(filler, "wb") as f:
        f.write(b"\0" * (shutil.disk_usage(small_disk).free - (34 << 20)))  # Over the floor and a quarter (32 MiB).
    args = ["eval", "--json", "-q", "-t", RELU, "-c", str(BIG_LIBRARY), "-b", "cpu", "--no-perf", "--cache-dir",
            str(cache)]
    v = json.loads(run_anvil(*args, "--infra-retries", "0").stdout)
    validate(v, load_schema())
    assert v["status"] == "infra_error" and v["reward"] is None, v
    assert "cannot copy the build into" in v["error"] and " MiB free there" in v["error"], v["error"]
    v = json.loads(run_anvil(*args).stdout)
    assert v["status"] == "runtime_error" and v["suspect_candidate"] and v["infra_retries"] == 2, v
    os.remove(filler)
    v = json.loads(run_anvil(*args).stdout)
    assert v["status"] == "pass", v
