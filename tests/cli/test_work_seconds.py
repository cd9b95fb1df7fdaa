"""A verdict's work_seconds (issue 38's first target): the device's work it ran, by who ran it — the task's
preparation and its baselines in the first verdict of a task only, the task server's and the candidate's in each —
never more than the verdict's own time."""

import uuid

from conftest import EXAMPLES, eval_json

CANDIDATES = EXAMPLES / "candidates" / "relu"


def test_each_part_of_the_work_is_counted_once(tmp_path):
    # A task of its own (the same ReLU, one comment more: never in the shared test cache), so that this run prepares
    # it and measures its baseline.
    task = tmp_path / "relu_work.py"
    task.write_text((EXAMPLES / "tasks" / "relu.py").read_text() + f"\n# work_seconds {uuid.uuid4()}\n")
    jobs = tmp_path / "jobs.jsonl"
    jobs.write_text("".join(f'{{"task": "{task}", "candidate": "{CANDIDATES / n}"}}\n'
                            for n in ("pass_kb.py", "pass_native.cpp", "wrong_answer_kb.py")))
    verdicts, p = eval_json("--list", str(jobs), "-j", "1", "--baselines", "eager", "--timeout", "60")
    assert p.returncode in (0, 1), p.stderr
    by_name = {v["candidate"]["path"].rsplit("/", 1)[-1]: v for v in verdicts}
    assert [by_name[n]["status"] for n in ("pass_kb.py", "pass_native.cpp", "wrong_answer_kb.py")] == \
        ["pass", "pass", "wrong_answer"]
    for v in verdicts:
        work = v["work_seconds"]
        assert work["server"] > 0 and work["candidate"] > 0, work
        assert sum(work.values()) < v["seconds"], (work, v["seconds"])
        # The candidate's work is its trials and timed calls: within the stages that ran them.
        assert work["candidate"] <= v["stage_seconds"]["run"] + v["stage_seconds"].get("perf", 0), v["stage_seconds"]
        assert "baseline_compile_seconds" not in v  # No compile baseline asked for.
    # Prepared once, its baseline measured once: each counted in one verdict.
    assert sum("prepare" in v["work_seconds"] for v in verdicts) == 1
    assert sum("baselines" in v["work_seconds"] for v in verdicts) == 1
    assert [v["work_seconds"]["prepare"] > 0 for v in verdicts if "prepare" in v["work_seconds"]] == [True]
    # A wrong answer is never timed, and no baseline is measured for it.
    assert "baselines" not in by_name["wrong_answer_kb.py"]["work_seconds"]


def test_the_workers_start_is_the_runs_setup_not_the_first_verdicts_stages(tmp_path):
    # The warm Python that forks anvil's workers (src/core/zygote.h) starts once per run and takes seconds (torch's
    # import; 9 s for the first verdicts of a run on the H100 host: bench/results/all_problems_h100_call8.md). It is
    # the run's setup, reported apart as torch's build facts are, not the first verdict's preparation or extraction.
    task = tmp_path / "relu_setup.py"
    task.write_text((EXAMPLES / "tasks" / "relu.py").read_text() + f"\n# setup {uuid.uuid4()}\n")
    eval_json("-t", str(task), "-c", str(CANDIDATES / "pass_kb.py"), "--no-perf")  # Torch's build facts found.
    verdicts, p = eval_json("-t", str(task), "-c", str(CANDIDATES / "pass_kb.py"), "--no-perf", "--trials", "2")
    assert [v["status"] for v in verdicts] == ["pass"], p.stderr
    stages = verdicts[0]["stage_seconds"]
    # Torch's import in the workers' start: about a second at least on any machine.
    assert stages["setup"] > 0.5, stages
    assert stages["extract"] + stages.get("prepare", 0) < 0.5 * stages["setup"], stages
