"""`anvil cache list` and `anvil cache prune` on a small real cache, made by `anvil eval --cache-dir`."""

import json
import os
import subprocess
import time

import pytest

from conftest import EXAMPLES, anvil_bin, run_anvil

RELU = str(EXAMPLES / "tasks" / "relu.py")
PASS_NATIVE = str(EXAMPLES / "candidates" / "relu" / "pass_native.cpp")
DAY = 24 * 60 * 60


def evaluate(cache):
    proc = run_anvil("eval", "--json", "-q", "--no-perf", "--cache-dir", str(cache), "--task", RELU,
                     "--candidate", PASS_NATIVE)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def listing(cache):
    proc = run_anvil("cache", "list", "--json", "--cache-dir", str(cache))
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """A cache of its own (these tests prune it): one prepared task and one built candidate."""
    path = tmp_path_factory.mktemp("cache")
    assert evaluate(path)["status"] == "pass"
    return path


def test_list_shows_what_the_cache_holds_by_kind(cache):
    listed = listing(cache)
    assert listed["cache_dir"] == str(cache)
    assert listed["kinds"]["tasks"]["entries"] == 1
    assert listed["kinds"]["artifacts"]["entries"] == 1
    assert listed["kinds"]["other"]["entries"] >= 2  # The torch and sandbox probes, lock files.
    assert listed["total"]["bytes"] == sum(kind["bytes"] for kind in listed["kinds"].values())
    assert {e["kind"] for e in listed["entries"]} == {"tasks", "artifacts"}
    assert all(e["path"].startswith(str(cache)) and e["bytes"] > 0 for e in listed["entries"])

    proc = run_anvil("cache", "du", "--cache-dir", str(cache))
    assert proc.returncode == 0, proc.stderr
    for label in ("artifacts", "torch PCH", "host PCH", "tasks", "other", "total"):
        assert label in proc.stdout


def test_a_cache_hit_marks_entries_used(cache):
    """Least recently *used*: entries made long ago but used now are not idle."""
    long_ago = time.time() - 10 * DAY
    for entry in listing(cache)["entries"]:
        os.utime(entry["path"], (long_ago, long_ago))
    proc = run_anvil("cache", "prune", "--older-than", "5", "--dry-run", "--json", "--cache-dir", str(cache))
    assert proc.returncode == 0, proc.stderr
    assert len(json.loads(proc.stdout)["removed"]) == 2

    assert evaluate(cache)["status"] == "pass"
    proc = run_anvil("cache", "prune", "--older-than", "5", "--dry-run", "--json", "--cache-dir", str(cache))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["removed"] == []


def test_a_dry_run_keeps_everything(cache):
    before = listing(cache)
    proc = run_anvil("cache", "prune", "--max-size", "1K", "--dry-run", "--cache-dir", str(cache))
    assert proc.returncode == 0, proc.stderr
    assert "would remove 2 entries" in proc.stdout, proc.stdout
    assert listing(cache) == before


def test_prune_to_a_size_removes_entries_and_eval_prepares_again(cache):
    proc = run_anvil("cache", "prune", "--max-size", "1K", "--cache-dir", str(cache))
    assert proc.returncode == 0, proc.stderr
    assert "removed 2 entries" in proc.stdout, proc.stdout
    listed = listing(cache)
    assert listed["entries"] == []
    assert (cache / "torch_info").is_dir() and (cache / "sandbox").is_dir()  # Never pruned.

    verdict = evaluate(cache)
    assert verdict["status"] == "pass"
    assert listing(cache)["kinds"]["tasks"]["entries"] == 1


def test_a_task_an_eval_is_using_is_kept(tmp_path):
    """The eval holds its prepared task until it ends: a prune meanwhile keeps it, and the eval ends as it would."""
    cache = tmp_path / "cache"
    eval_proc = subprocess.Popen(
        [anvil_bin(), "eval", "--json", "-q", "--no-perf", "--timeout", "8", "--cache-dir", str(cache), "--task", RELU,
         "--candidate", str(EXAMPLES / "candidates" / "relu" / "timeout_native.cpp")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while not (tasks := [p for p in (cache / "tasks").glob("relu-*") if p.is_dir()]) and eval_proc.poll() is None:
        assert time.time() < deadline, "the eval prepared no task"
        time.sleep(0.1)
    assert tasks, eval_proc.communicate()[1]
    # Idle by its mtime, so that only the eval's hold keeps it (the candidate's fresh build is not due to go).
    long_ago = time.time() - 10 * DAY
    os.utime(tasks[0], (long_ago, long_ago))
    proc = run_anvil("cache", "prune", "--older-than", "1", "--json", "--cache-dir", str(cache))
    out, err = eval_proc.communicate(timeout=300)
    assert proc.returncode == 0, proc.stderr
    pruned = json.loads(proc.stdout)
    assert [e["path"] for e in pruned["in_use"]] == [str(tasks[0])], pruned
    assert pruned["removed"] == []
    assert tasks[0].is_dir()
    assert eval_proc.returncode == 0, err
    assert json.loads(out)["status"] == "timeout"

    # Once the eval has ended, nothing holds it.
    proc = run_anvil("cache", "prune", "--older-than", "1", "--json", "--cache-dir", str(cache))
    assert proc.returncode == 0, proc.stderr
    assert [e["path"] for e in json.loads(proc.stdout)["removed"]] == [str(tasks[0])]
    assert not tasks[0].exists()


@pytest.mark.parametrize("args,words", [
    (["--max-size", "12X"], ["--max-size", "'12X' is not a size", "50G"]),
    (["--max-size", "lots"], ["is not a size"]),
    ([], ["--max-size SIZE", "--older-than DAYS"]),
    (["--older-than", "-3"], ["--older-than", "0 or more"]),
])
def test_bad_prune_usage_says_what_to_give(cache, args, words):
    proc = run_anvil("cache", "prune", "--cache-dir", str(cache), *args)
    assert proc.returncode == 2
    for word in words:
        assert word in proc.stderr, proc.stderr


def test_a_missing_cache_folder_is_a_usage_error(tmp_path):
    for command in (["list"], ["prune", "--max-size", "1G"]):
        proc = run_anvil("cache", *command, "--cache-dir", str(tmp_path / "nowhere"))
        assert proc.returncode == 2
        assert "no cache folder at" in proc.stderr and "--cache-dir" in proc.stderr, proc.stderr
