"""`anvil tasks`, broken tasks, bad usage, --help, and the cuda backend on a machine without a GPU."""

import json
import shutil
from pathlib import Path

import pytest

from conftest import BAD_TASKS, EXAMPLES, cache_dir, eval_json, run_anvil

RELU = str(EXAMPLES / "tasks" / "relu.py")


def test_tasks_lists_examples():
    proc = run_anvil("tasks", str(EXAMPLES / "tasks"))
    assert proc.returncode == 0
    for name in ("relu", "softmax", "matmul", "linear_relu", "small_mlp", "sum_reduction"):
        assert name in proc.stdout
    assert "6 tasks" in proc.stdout


def test_tasks_spec_json():
    proc = run_anvil("tasks", str(EXAMPLES / "tasks" / "linear_relu.py"), "--spec", "--json",
                     "--cache-dir", cache_dir())
    assert proc.returncode == 0, proc.stderr
    spec = json.loads(proc.stdout)
    assert spec["inputs"] == [{"name": "in0", "dtype": "float32", "shape": [32, 256], "strides": [256, 1]}]
    assert [p["name"] for p in spec["params"]] == ["linear.weight", "linear.bias"]
    assert spec["outputs"][0]["shape"] == [32, 128]
    assert any("addmm" in op["op"] or "linear" in op["op"] for op in spec["ops"])
    assert any("relu" in op["op"] for op in spec["ops"])
    assert spec["init_inputs"] == [256, 128]


def test_eval_finds_the_task_that_tasks_spec_prepared(tmp_path):
    """`anvil tasks --spec` prepares with `anvil eval`'s defaults: eval then judges from the same prepared folder."""
    cache = tmp_path / "cache"
    proc = run_anvil("tasks", str(RELU), "--spec", "--cache-dir", str(cache))
    assert proc.returncode == 0, proc.stderr
    assert "[cached]" not in proc.stdout
    prepared = sorted(p.name for p in (cache / "tasks").iterdir() if p.is_dir())
    assert len(prepared) == 1, prepared
    proc = run_anvil("eval", "--json", "-q", "--cache-dir", str(cache), "--task", str(RELU), "--candidate",
                     str(EXAMPLES / "candidates" / "relu" / "pass_native.cpp"), "--baselines", "none")
    assert json.loads(proc.stdout)["status"] == "pass", proc.stderr
    # The health probe's bundled relu is the same task: still the one folder.
    assert sorted(p.name for p in (cache / "tasks").iterdir() if p.is_dir()) == prepared
    assert "[cached]" in run_anvil("tasks", str(RELU), "--spec", "--cache-dir", str(cache)).stdout


@pytest.mark.parametrize("task,stage,words", [
    ("syntax_error.py", "import", "syntax error"),
    ("import_error.py", "import", "anvil_no_such_module"),
    ("no_model.py", "missing", "Model"),
    ("bad_inputs.py", "get_inputs", "get_inputs"),
    ("bad_forward.py", "forward", "forward"),
    ("bad_init_inputs.py", "get_init_inputs", "anvil_bad_init"),
])
def test_broken_tasks_get_clear_messages(task, stage, words):
    proc = run_anvil("eval", "--cache-dir", cache_dir(), "--task", str(BAD_TASKS / task), "--candidate",
                     str(EXAMPLES / "candidates" / "relu" / "pass_native.cpp"))
    assert proc.returncode == 2
    assert f"[stage: {stage}]" in proc.stderr, proc.stderr
    assert words in proc.stderr
    assert task.replace(".py", "") in proc.stderr


def test_a_held_out_set_naming_a_global_the_task_lacks_is_a_clear_task_error(tmp_path):
    task = tmp_path / "relu.py"
    shutil.copy(RELU, task)
    (tmp_path / "relu.anvil.json").write_text('{"held_out": [{"batch": 5}]}')
    proc = run_anvil("eval", "--cache-dir", cache_dir(), "--task", str(task), "--candidate",
                     str(EXAMPLES / "candidates" / "relu" / "pass_native.cpp"))
    assert proc.returncode == 2
    assert "[stage: held_out]" in proc.stderr and "no module global 'batch'" in proc.stderr, proc.stderr


def jobs_file(tmp_path, rows):
    """A --list file of (task, relu example candidate name) rows."""
    jobs = tmp_path / "jobs.jsonl"
    jobs.write_text("".join(json.dumps({"task": str(task), "candidate": str(EXAMPLES / "candidates" / "relu" / name)})
                            + "\n" for task, name in rows))
    return jobs


def test_broken_task_in_a_batch_gives_infra_error_and_the_run_goes_on(tmp_path):
    jobs = jobs_file(tmp_path, [(BAD_TASKS / "bad_forward.py", "pass_native.cpp"), (RELU, "pass_native.cpp")])
    out = tmp_path / "verdicts.jsonl"
    verdicts, proc = eval_json("--list", str(jobs), "--no-perf", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert [v["status"] for v in verdicts] == ["infra_error", "pass"]
    assert "bad_forward" in verdicts[0]["error"]
    assert len(out.read_text().splitlines()) == 2


def test_a_task_whose_init_arguments_fail_gives_its_kernelbench_candidates_infra_error(tmp_path):
    # A kernelbench candidate is extracted with the task's init arguments (task_worker init, made on the CPU while
    # the reference is prepared): their failure names the task and the stage, and the next job is unaffected.
    jobs = jobs_file(tmp_path, [(BAD_TASKS / "bad_init_inputs.py", "pass_kb.py"), (RELU, "pass_kb.py")])
    verdicts, proc = eval_json("--list", str(jobs), "--no-perf", "--jobs", "2", "--compile-jobs", "2")
    assert proc.returncode == 0, proc.stderr
    assert [v["status"] for v in verdicts] == ["infra_error", "pass"]
    assert "bad_init_inputs" in verdicts[0]["error"] and "[stage: get_init_inputs]" in verdicts[0]["error"], \
        verdicts[0]["error"]
    assert "anvil_bad_init" in verdicts[0]["error"]


def test_a_batch_that_ends_before_its_task_is_prepared_exits_cleanly(tmp_path):
    # The task is prepared beside the candidates' extraction and compile; cheats decided on static evidence end
    # first, and anvil must wait for the preparation still running before it exits (it uses the evaluator's state).
    from conftest import run_anvil as anvil
    task = tmp_path / "relu.py"
    task.write_text(Path(RELU).read_text() + "\n# a new task: prepared from scratch\n")
    cheat = EXAMPLES / "candidates" / "relu" / "cheat_kb.py"
    copies = [shutil.copy(cheat, tmp_path / f"cheat_{i}_kb.py") for i in range(2)]
    proc = anvil("eval", "--json", "-q", "--cache-dir", str(tmp_path / "cache"), "--task", str(task), "--candidate",
                 *map(str, copies), "--no-perf", "--compile-jobs", "2", "--jobs", "2")
    assert proc.returncode == 0, proc.stderr[-3000:]
    verdicts = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert [v["status"] for v in verdicts] == ["cheat", "cheat"]
    assert "prepare" not in verdicts[0]["stage_seconds"] or verdicts[0]["stage_seconds"]["prepare"] < 30
    assert list((tmp_path / "cache" / "tasks").glob("relu-*/spec.json")), "the preparation was cut short"


def test_an_interrupted_eval_resumes_from_its_out_file(tmp_path):
    """The infra_error verdict and a last line cut short by the interruption are evaluated again; the two whole
    verdicts are not, and the file ends up with one verdict per job."""
    relu = EXAMPLES / "candidates" / "relu"
    jobs = tmp_path / "jobs.jsonl"
    rows = [(str(BAD_TASKS / "bad_forward.py"), relu / "pass_native.cpp"), (RELU, relu / "pass_native.cpp"),
            (RELU, relu / "wrong_answer_native.cpp"), (RELU, relu / "segfault_native.cpp")]
    jobs.write_text("".join(json.dumps({"task": t, "candidate": str(c)}) + "\n" for t, c in rows))
    out = tmp_path / "verdicts.jsonl"
    first, proc = eval_json("--list", str(jobs), "--no-perf", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert [v["status"] for v in first] == ["infra_error", "pass", "wrong_answer", "runtime_error"]
    lines = out.read_text().splitlines()
    out.write_text("\n".join(lines[:3]) + "\n" + lines[3][:120])  # Killed while writing the last verdict.
    again, proc = eval_json("--list", str(jobs), "--no-perf", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "dropping a truncated last line" in proc.stderr
    assert "2 candidate(s) already have a verdict" in proc.stderr
    assert [(Path(v["task"]["path"]).name, v["status"]) for v in again] == [
        ("bad_forward.py", "infra_error"), ("relu.py", "runtime_error")]
    statuses = [json.loads(line)["status"] for line in out.read_text().splitlines()]
    assert statuses == ["infra_error", "pass", "wrong_answer", "infra_error", "runtime_error"]
    _, proc = eval_json("--list", str(jobs), "--no-perf", "--out", str(out))
    assert proc.returncode == 0 and "evaluating 1" in proc.stderr  # Only the infra_error is retried.


def test_usage_errors_exit_2():
    assert run_anvil("eval", "--candidate", "x.py").returncode == 2
    assert run_anvil("eval", "--task", RELU).returncode == 2
    assert run_anvil("eval", "--task", "/nonexistent/task.py", "--candidate", "x.py").returncode == 2
    assert run_anvil("eval", "--task", RELU, "--candidate", "/nonexistent.py").returncode == 2
    assert run_anvil("eval", "--backend", "tpu", "--task", RELU, "--candidate", RELU).returncode == 2
    bad_gpus = run_anvil("eval", "--backend", "cuda", "--gpus", "two", "--task", RELU, "--candidate", RELU)
    assert bad_gpus.returncode == 2 and "--gpus takes a number of GPUs or 'all'" in bad_gpus.stderr
    assert run_anvil("frobnicate").returncode == 2
    assert run_anvil().returncode == 2


def test_help_on_every_command():
    for args in ([], ["eval"], ["tasks"]):
        proc = run_anvil(*args, "--help")
        assert proc.returncode == 0
        assert "Usage" in proc.stdout or "usage" in proc.stdout.lower()
    assert "--candidate" in run_anvil("eval", "--help").stdout


def test_cuda_backend_without_gpu_runs_compile_and_static_checks():
    env = {"ANVIL_ASSUME_NO_GPU": "1"}
    cands = EXAMPLES / "candidates"
    verdicts, proc = eval_json("--backend", "cuda", "--task", str(EXAMPLES / "tasks" / "matmul.py"), "--candidate",
                               str(cands / "matmul" / "cheat_native.cpp"), str(cands / "matmul" / "pass_native.cpp"),
                               env=env)
    assert proc.returncode == 0, proc.stderr
    assert "no cuda device" in proc.stderr
    cheat, ok = verdicts
    assert cheat["status"] == "cheat"
    # The static check decides a cheat before anything is built.
    assert cheat["gates"]["compile"]["ran"] is False
    assert "not built" in cheat["gates"]["compile"]["summary"]
    assert ok["status"] == "infra_error"
    assert ok["gates"]["compile"]["ok"] is True
    assert ok["gates"]["compile"]["compiler"].endswith("nvcc")
    assert "no cuda device is present" in ok["error"]
    assert ok["backend"] == {"name": "cuda", "device_present": False}
    verdicts, _ = eval_json("--backend", "cuda", "--task", RELU, "--candidate",
                            str(cands / "relu" / "compile_error_native.cpp"), env=env)
    assert verdicts[0]["status"] == "compile_error"


def test_sandbox_check_reports_layers_and_works_on_the_cpu():
    proc = run_anvil("sandbox-check", "--backend", "cpu", "--cache-dir", cache_dir())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "The full sandbox works with the cpu device here." in proc.stdout
    assert "seccomp" in proc.stdout and "(none)" in proc.stdout
    # The quotas' mechanisms this machine allows (cgroup v1's memory and pids here), or why none.
    assert "Quotas (--quota-memory, --quota-pids): " in proc.stdout, proc.stdout
    assert "CPU time (--quota-cpu): RLIMIT_CPU" in proc.stdout, proc.stdout
    assert "Device memory (--quota-device-memory, cuda): " in proc.stdout, proc.stdout  # NVML's, or why none.
    bad = run_anvil("sandbox-check", "--backend", "tpu")
    assert bad.returncode == 2 and "tpu" in bad.stderr
    # One variant, with an extra readable path for a driver (ANVIL_SANDBOX_READ; a missing one is skipped): the
    # `root` layer is in force without Landlock where user namespaces are.
    one = run_anvil("sandbox-check", "--backend", "cpu", "--cache-dir", cache_dir(), "--switches", "-landlock",
                    env={"ANVIL_SANDBOX_READ": "/run:/no/such/path"})
    assert one.returncode == 0, one.stdout + one.stderr
    rows = [line for line in one.stdout.splitlines() if line.startswith("-landlock")]
    assert len(rows) == 1 and "ok" in rows[0] and "landlock," not in rows[0], one.stdout
    assert "(none)" not in one.stdout and "anvil picks" not in one.stdout
