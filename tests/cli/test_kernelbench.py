"""`anvil kernelbench`: a KernelBench run folder in, per-level Pass@k / Avg@N / fast_p out; reruns resume."""

import json
import shutil
import subprocess
import time

from conftest import EXAMPLES, anvil_bin, cache_dir, load_schema, run_anvil, validate

CANDS = EXAMPLES / "candidates"
# Native candidates compile in about a second; kernelbench .py ones cost an extension build each.
SAMPLES = {
    "level_1_problem_1_sample_0_kernel.cpp": CANDS / "relu" / "pass_native.cpp",
    "level_1_problem_1_sample_1_kernel.cpp": CANDS / "relu" / "wrong_answer_native.cpp",
    "level_2_problem_3_sample_0_kernel.cpp": CANDS / "softmax" / "pass_native.cpp",
}
FAST = ("--baselines", "eager", "--iters", "5", "--warmup", "1")


def make_run(tmp_path):
    root = tmp_path / "kb"
    (root / "level1").mkdir(parents=True)
    (root / "level2").mkdir()
    shutil.copy(EXAMPLES / "tasks" / "relu.py", root / "level1" / "1_ReLU.py")
    shutil.copy(EXAMPLES / "tasks" / "softmax.py", root / "level2" / "3_Softmax.py")
    run = tmp_path / "run"
    run.mkdir()
    for name, src in SAMPLES.items():
        shutil.copy(src, run / name)
    return root, run


def kernelbench(root, run, *args):
    proc = run_anvil("kernelbench", "--run", str(run), "--kernelbench", str(root), "--json",
                     "--cache-dir", cache_dir(), *FAST, *args)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout), proc


def log_lines(run):
    lines = (run / "anvil_verdicts.jsonl").read_text().splitlines()
    for line in lines:
        try:
            validate(json.loads(line), load_schema())  # Every whole verdict line holds to the schema.
        except json.JSONDecodeError:
            pass  # A line cut short on purpose by a test.
    return lines


def logged_candidates(run):
    return sorted(json.loads(line)["candidate"]["path"].rsplit("/", 1)[1] for line in log_lines(run))


def by_level(report):
    return {lvl["level"]: lvl for lvl in report["levels"]}


def assert_expected_metrics(report):
    levels = by_level(report)
    assert set(levels) == {1, 2}
    one, two, all_ = levels[1], levels[2], report["overall"]
    assert (one["problems"], one["n"], one["passed"]) == (1, 2, 1)
    assert one["pass_at_k_pct"] == {"1": 50.0, "2": 100.0}
    assert one["avg_at_n_pct"] == 50.0
    assert one["statuses"] == {"pass": 1, "wrong_answer": 1}
    assert (two["problems"], two["n"]) == (1, 1)
    assert two["pass_at_k_pct"]["1"] == 100.0 and two["avg_at_n_pct"] == 100.0
    assert all_["level"] == "all" and all_["problems"] == 2 and all_["samples"] == 3
    assert all_["pass_at_k_pct"]["1"] == 75.0  # (1/2 + 1/1) / 2 problems
    assert abs(all_["avg_at_n_pct"] - 200.0 / 3) < 1e-9  # 2 of 3 samples
    # Sample 0 of both problems passes: fast_0 is 1; a passing sample has an eager speedup.
    assert all_["fast_p"]["0"] == 1.0 and set(all_["fast_p"]) == {"0", "0.5", "0.8", "1.0", "1.5", "2.0"}
    assert all_["geomean_samples"]["eager"] == 2 and all_["geomean_speedup"]["eager"] > 0
    assert all_["geomean_speedup"]["compile"] is None  # --baselines eager


def test_reports_per_level_metrics_and_logs_every_verdict(tmp_path):
    root, run = make_run(tmp_path)
    (run / "notes.py").write_text("# not a KernelBench candidate name\n")
    shutil.copy(SAMPLES["level_1_problem_1_sample_0_kernel.cpp"], run / "level_1_problem_9_sample_0_kernel.cpp")
    report, proc = kernelbench(root, run)
    assert_expected_metrics(report)
    assert (report["candidates"], report["already_done"], report["evaluated"]) == (3, 0, 3)
    assert report["skipped_files"][0]["file"] == "notes.py"
    assert report["missing_problems"] == [{
        "level": 1, "problem": 9, "files": ["level_1_problem_9_sample_0_kernel.cpp"],
        "reason": f"no problem file 9_*.py in {root / 'level1'}"}]
    assert "notes.py: name does not match" in proc.stderr
    assert "[3/3]" in proc.stderr
    assert logged_candidates(run) == sorted(SAMPLES)


def test_text_table_has_a_row_per_level_and_overall(tmp_path):
    root, run = make_run(tmp_path)
    proc = run_anvil("kernelbench", "--run", str(run), "--kernelbench", str(root), "--cache-dir", cache_dir(), *FAST)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    header = next(line for line in lines if line.startswith("level"))
    for column in ("Pass@1", "Pass@N", "Avg@N", "Faster eager", "Faster compile", "geomean eager", "fast_1.0"):
        assert column in header
    rows = {line.split()[0]: line.split() for line in lines if line[:1].isdigit() or line.startswith("all ")}
    assert rows["1"][1:6] == ["1", "2", "50.0%", "100.0%", "50.0%"]
    assert rows["2"][1:6] == ["1", "1", "100.0%", "100.0%", "100.0%"]
    assert rows["all"][1:6] == ["2", "1-2", "75.0%", "100.0%", "66.7%"]


def test_rerun_evaluates_nothing_and_recomputes_metrics_from_the_log(tmp_path):
    root, run = make_run(tmp_path)
    kernelbench(root, run)
    before = log_lines(run)
    # A tiny threshold makes every passing sample "faster": metrics come from the log, not from new runs.
    report, proc = kernelbench(root, run, "--faster-than", "1e-9")
    assert log_lines(run) == before
    assert (report["already_done"], report["evaluated"]) == (3, 0)
    assert "3 already done" in proc.stderr and "evaluating 0" in proc.stderr
    assert "[1/" not in proc.stderr
    assert_expected_metrics(report)
    assert abs(report["overall"]["faster_rate_pct"]["eager"] - 200.0 / 3) < 1e-9


def test_truncated_log_resumes_with_exactly_the_missing_candidates(tmp_path):
    root, run = make_run(tmp_path)
    kernelbench(root, run)
    log = run / "anvil_verdicts.jsonl"
    first = log_lines(run)[0]
    log.write_text(first + "\n" + '{"schema_version": 1, "status": "pa')  # Killed mid-write.
    report, proc = kernelbench(root, run)
    assert "dropping a truncated last line" in proc.stderr
    assert (report["already_done"], report["evaluated"]) == (1, 2)
    assert "[2/2]" in proc.stderr
    lines = log_lines(run)
    assert lines[0] == first
    assert logged_candidates(run) == sorted(SAMPLES)  # Each once; the garbage is gone.
    assert_expected_metrics(report)


def test_resume_keys_on_the_policy_and_machine_failures_leave_n(tmp_path):
    root, run = make_run(tmp_path)
    kernelbench(root, run)
    by_name = {json.loads(line)["candidate"]["path"].rsplit("/", 1)[1]: json.loads(line) for line in log_lines(run)}
    old = by_name["level_1_problem_1_sample_0_kernel.cpp"]
    assert old["schema_version"] == 2 and old["policy"] == {"name": "musacoder", "version": 1, "overrides": {}}
    # A version-1 verdict has no policy block: it was judged by musacoder 1's rules, so it stands.
    del old["policy"]
    old["schema_version"] = 1
    other = by_name["level_1_problem_1_sample_1_kernel.cpp"]
    other["policy"] = {"name": "kernelbench", "version": 1, "overrides": {}}  # Judged again.
    infra = by_name["level_2_problem_3_sample_0_kernel.cpp"]
    infra.update(status="infra_error", reward=None, correctness_rate=0.0, error="no device")
    (run / "anvil_verdicts.jsonl").write_text("".join(json.dumps(v) + "\n" for v in (old, other, infra)))
    report, proc = kernelbench(root, run)
    assert (report["already_done"], report["evaluated"]) == (2, 1), proc.stderr
    assert "1 verdict(s)" in proc.stderr and "another backend or policy" in proc.stderr
    # The infra_error leaves n: level 2 problem 3 has no judged sample and fails; Pass@k is over 1 of 2 problems.
    all_ = report["overall"]
    assert (all_["problems"], all_["problems_judged"], all_["samples"], all_["unjudged"]) == (2, 1, 3, 1)
    assert all_["unjudged_problems"] == ["level 2 problem 3"]
    assert all_["pass_at_k_pct"] == {"1": 25.0, "2": 50.0}  # (1/2 + 0) / 2, (1 + 0) / 2
    assert all_["avg_at_n_pct"] == 50.0 and all_["statuses"]["infra_error"] == 1  # 1 of 2 judged samples
    proc = run_anvil("kernelbench", "--run", str(run), "--kernelbench", str(root), "--cache-dir", cache_dir(), *FAST)
    assert proc.returncode == 0, proc.stderr
    assert "Pass@k is over 1 of 2 problems" in proc.stdout and "\n  level 2 problem 3\n" in proc.stdout


def test_killed_run_continues_where_it_stopped(tmp_path):
    root, run = make_run(tmp_path)
    log = run / "anvil_verdicts.jsonl"
    proc = subprocess.Popen([anvil_bin(), "kernelbench", "--run", str(run), "--kernelbench", str(root), "-q",
                             "--cache-dir", cache_dir(), *FAST], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 600
    while time.time() < deadline and proc.poll() is None:
        if log.exists() and log.read_text().count("\n") >= 1:
            break
        time.sleep(0.05)
    proc.kill()
    proc.wait()
    done = [line for line in log.read_text().split("\n")[:-1]]
    assert 1 <= len(done) <= 3
    report, _ = kernelbench(root, run)
    assert report["already_done"] == len(done) and report["evaluated"] == 3 - len(done)
    assert logged_candidates(run) == sorted(SAMPLES)
    assert_expected_metrics(report)


def test_usage_errors_say_what_is_wrong(tmp_path):
    root, run = make_run(tmp_path)
    proc = run_anvil("kernelbench", "--kernelbench", str(root))
    assert proc.returncode == 2 and "--run" in proc.stderr
    proc = run_anvil("kernelbench", "--run", str(run), "--kernelbench", str(tmp_path / "nowhere"))
    assert proc.returncode == 2 and "KernelBench problems not found" in proc.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = run_anvil("kernelbench", "--run", str(empty), "--kernelbench", str(root))
    assert proc.returncode == 2 and "nothing to evaluate" in proc.stderr
    proc = run_anvil("kernelbench", "--run", str(run), "--kernelbench", str(root), "--baselines", "eagre")
    assert proc.returncode == 2 and "--baselines" in proc.stderr
