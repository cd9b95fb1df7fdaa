"""Containment (issue 35): each candidate process runs in control groups of its own, with a memory quota and a
quota of processes and threads. A bomb meets its quota and is the candidate's failure, named by the kernel's own
count (never by what the candidate prints); its honest twin passes under the same quotas. Each bomb is bounded
(2 GiB, 512 threads) so that a quota that did not hold would cost this machine little."""

import ctypes.util
import json
import shutil
import subprocess

import pytest

from conftest import EXAMPLES, ROOT, anvil_bin, cache_dir, eval_json, load_schema, run_anvil, validate

RELU = str(EXAMPLES / "tasks" / "relu.py")
HONEST = str(EXAMPLES / "candidates" / "relu" / "pass_native.cpp")
QUOTA = ROOT / "tests" / "redteam" / "quota"
FLAGS = ("-b", "cpu", "--timeout", "30", "--no-perf", "--quota-memory", "256M", "--quota-pids", "64")


def judge(candidate, *flags, env=None):
    verdicts, proc = eval_json("-t", RELU, "-c", str(candidate), *flags, env=env)
    if proc.returncode == 2 and "this machine cannot keep it" in proc.stderr:
        pytest.skip(proc.stderr.strip())  # No writable control groups here (this machine and CI's have them).
    assert len(verdicts) == 1, proc.stderr
    return verdicts[0]


def test_a_malloc_bomb_meets_its_memory_quota_and_the_honest_twin_passes():
    v = judge(QUOTA / "malloc_bomb_native.cpp", *FLAGS)
    assert v["status"] == "runtime_error", v
    run = v["gates"]["run"]
    assert run["stage"] == "memory_quota", run
    assert "memory quota of 256 MiB" in run["message"] and "killed" in run["message"], run
    assert "cgroup" in run["sandbox"]
    assert "memory quota of 256 MiB" in v["feedback"], v["feedback"]
    twin = judge(HONEST, *FLAGS)
    assert twin["status"] == "pass", twin
    assert "cgroup" in twin["gates"]["run"]["sandbox"]


def test_a_thread_bomb_meets_its_process_quota():
    v = judge(QUOTA / "thread_bomb_native.cpp", *FLAGS)
    assert v["status"] == "runtime_error", v
    assert "quota of 64 processes and threads" in v["gates"]["run"]["message"], v["gates"]["run"]


def test_a_compiler_bomb_meets_the_compilers_memory_quota():
    v = judge(QUOTA / "compiler_bomb_native.cpp", *FLAGS)
    assert v["status"] == "compile_error", v
    summary = v["gates"]["compile"]["summary"]
    assert summary.startswith("[anvil] the compiler went over its memory quota of 256 MiB"), summary
    assert "compiler went over its memory quota of 256 MiB" in v["feedback"], v["feedback"]
    assert v["quotas"]["compile_memory_bytes"] == 256 << 20
    assert v["quotas"]["compile_pids"] == 64


def test_a_compiler_killed_over_anvils_own_small_share_is_the_machines_failure():
    """Under `--quota-memory auto` the quota is anvil's share of the machine: 80 jobs at once (-j 16 with 16 builds
    ahead) leave each well under the 4 GiB an honest build with torch's headers may need (nvcc was killed at 2 GiB in
    a 10 GiB container over 5 jobs). A compiler killed there is the machine's limit, whatever the source: infra_error
    naming the flags, and not tried again (the retry keeps the quota); a quota asked for by name stays the source's
    (test_a_compiler_bomb_meets_the_compilers_memory_quota)."""
    v = judge(QUOTA / "compiler_bomb_native.cpp", "-b", "cpu", "--timeout", "30", "--no-perf", "--quota-memory",
              "auto", "-j", "16", "--compile-jobs", "16")
    assert v["quotas"]["compile_memory_bytes"] < 4 << 30, v["quotas"]
    assert v["status"] == "infra_error", v
    assert "compiler went over its memory quota" in v["error"] and "--quota-memory 4G" in v["error"], v["error"]
    assert v.get("infra_retries", 0) == 0, v


def test_a_memory_bomb_at_import_meets_its_quota_while_anvil_extracts_the_sources():
    v = judge(QUOTA / "import_bomb_kb.py", *FLAGS)
    assert v["status"] == "runtime_error", v
    run = v["gates"]["run"]
    assert run["stage"] == "memory_quota", run
    assert run["message"].startswith("importing the candidate went over its memory quota of 256 MiB"), run


def test_verdicts_list_the_quotas_in_force():
    v = judge(HONEST, *FLAGS)
    assert v["quotas"]["run_memory_bytes"] == 256 << 20 and v["quotas"]["run_pids"] == 64, v.get("quotas")


def test_without_quotas_the_run_has_no_cgroup_layer():
    v = judge(HONEST, "-b", "cpu", "--timeout", "30", "--no-perf", "--quota-memory", "none", "--quota-pids", "0",
              "--quota-cpu", "none")
    assert v["status"] == "pass", v
    assert "cgroup" not in v["gates"]["run"]["sandbox"]
    assert "quotas" not in v


@pytest.mark.parametrize("flag,value,says", [("--quota-memory", "lots", "--quota-memory takes a size"),
                                             ("--quota-pids", "-1", "--quota-pids takes 0"),
                                             ("--quota-cpu", "2.5", "--quota-cpu takes whole seconds"),
                                             ("--quota-device-memory", "most", "--quota-device-memory takes a size")])
def test_malformed_quotas_are_refused_by_name(flag, value, says):
    proc = run_anvil("eval", "-t", RELU, "-c", HONEST, "-b", "cpu", flag, value)
    assert proc.returncode == 2, proc.stderr
    assert says in proc.stderr


def test_a_device_memory_quota_this_machine_cannot_keep_is_refused_by_name():
    """The device-memory quota is read from NVML (tests/gpu/test_gpu_device_memory.py holds it on a GPU): asked for by
    name where NVML is not, it is refused, never silently dropped; `auto` runs without it there."""
    if ctypes.util.find_library("nvidia-ml"):
        pytest.skip("NVML is here: tests/gpu/test_gpu_device_memory.py")
    proc = run_anvil("eval", "-t", RELU, "-c", HONEST, "-b", "cuda", "--quota-device-memory", "4G")
    assert proc.returncode == 2, proc.stderr
    assert "--quota-device-memory 4G: this machine cannot keep it (NVML is not here" in proc.stderr, proc.stderr
    assert "--quota-device-memory none" in proc.stderr


def test_a_descriptor_bomb_meets_its_open_files_quota():
    """Its right answer is in its outputs, but it holds every descriptor its quota allows (4096, RLIMIT_NOFILE), so its
    worker cannot write them: the candidate's failure (runtime_error), never anvil's."""
    v = judge(QUOTA / "descriptor_bomb_native.cpp", *FLAGS)
    assert v["status"] == "runtime_error" and v["error"] is None, v
    assert "Too many open files" in v["feedback"], v["feedback"]


def test_the_quotas_admitted_at_once_never_sum_past_the_memory_available():
    """`auto` shares the memory available among every candidate process that may be alive at once: one per run slot
    (-j), and with builds ahead (--compile-jobs) also the places waiting for timed calls (three per run slot) and the
    builds. -j 2 --compile-jobs 2 may hold 2 + 6 + 2 = 10 at once: a tenth of what -j 1 alone gets."""
    quotas = []
    for flags in (("-j", "1", "--compile-jobs", "0"), ("-j", "2", "--compile-jobs", "2")):
        v = judge(HONEST, "-b", "cpu", "--no-perf", "--quota-memory", "auto", *flags)
        assert v["status"] == "pass", v
        quotas.append(v["quotas"]["run_memory_bytes"])
    assert quotas[0] / quotas[1] == pytest.approx(10, rel=0.05), quotas


def test_scratch_writes_meet_the_memory_quota_not_the_disk():
    """The run's folder, the only one a candidate may write, is in memory: writing 2 GiB there (16 files of 128 MiB)
    meets the candidate's memory quota, told by the kernel's count; the disk never fills. (Its fopen is a static
    cheat on its own: the static verdicts are off, to reach the run.)"""
    v = judge(QUOTA / "scratch_filler_native.cpp", *FLAGS, env={"ANVIL_STATIC_VERDICTS": "0"})
    assert v["status"] == "runtime_error", v
    assert v["gates"]["run"]["stage"] == "memory_quota", v["gates"]["run"]


def test_a_spinner_meets_its_cpu_quota_before_its_deadline():
    """Four threads spinning before any output: past 2 CPU seconds (RLIMIT_CPU, all threads together) the kernel's
    SIGXCPU ends it, a timeout named by its quota, long before the 30 s deadline. One that ignores SIGXCPU is killed
    by the kernel a second later: its own failure, never the machine's."""
    flags = ("-b", "cpu", "--timeout", "30", "--no-perf", "--quota-cpu", "2")
    v = judge(QUOTA / "cpu_spinner_native.cpp", *flags)
    assert v["status"] == "timeout", v
    run = v["gates"]["run"]
    assert run["stage"] == "cpu_quota" and "CPU-time quota of 2 s" in run["message"], run
    assert run["seconds"] < 20, run
    assert v["quotas"]["run_cpu_seconds"] == 2
    # Its signal() is a static cheat on its own: the static verdicts are off, to reach the run.
    ignored = judge(QUOTA / "cpu_spinner_sigxcpu_ignored_native.cpp", *flags, env={"ANVIL_STATIC_VERDICTS": "0"})
    assert ignored["status"] == "runtime_error" and ignored["error"] is None, ignored
    assert ignored["gates"]["run"]["seconds"] < 20, ignored["gates"]["run"]
    twin = judge(HONEST, *flags)
    assert twin["status"] == "pass", twin


def test_the_default_cpu_quota_is_a_backstop_past_both_deadlines():
    import os
    v = judge(HONEST, "-b", "cpu", "--timeout", "30", "--no-perf")
    assert v["quotas"]["run_cpu_seconds"] == 2 * 30 * os.cpu_count(), v["quotas"]
    none = judge(HONEST, "-b", "cpu", "--timeout", "30", "--no-perf", "--quota-cpu", "none")
    assert "run_cpu_seconds" not in (none.get("quotas") or {}), none.get("quotas")


def test_an_open_file_limit_on_anvil_itself_is_the_machines_failure():
    """anvil started under a hard RLIMIT_NOFILE below what each candidate process is promised (4096): the machine's
    setting, named before any candidate runs (infra_error, reward null, not tried again), never a candidate's
    runtime_error. At 4096 the same candidate passes. (Below this, anvil's own pipes fail first: also infra_error.)"""
    if shutil.which("prlimit") is None:
        pytest.skip("prlimit (util-linux) is not installed")
    verdicts = {}
    for n in (1024, 4096):
        proc = subprocess.run(["prlimit", f"--nofile={n}", anvil_bin(), "eval", "--json", "-q", "--cache-dir",
                               cache_dir(), "-t", RELU, "-c", HONEST, "-b", "cpu", "--no-perf"],
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr
        verdicts[n] = json.loads(proc.stdout)
        validate(verdicts[n], load_schema())
    low = verdicts[1024]
    assert low["status"] == "infra_error" and low["reward"] is None and "infra_retries" not in low, low
    assert "RLIMIT_NOFILE" in low["error"] and "1024" in low["error"] and "ulimit -n" in low["error"], low["error"]
    assert verdicts[4096]["status"] == "pass", verdicts[4096]
