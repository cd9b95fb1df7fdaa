"""The evaluator alone tries an infra_error again (issue 35, step 5): an infra_error that came while the candidate's
code ran is tried again up to twice (`--infra-retries`), alone among the process's evaluations, each after the machine
judged its health probe (the bundled relu and its honest kernel) `pass`. A failure that goes away gives the verdict
of the try that worked; one that recurs with this candidate only is taken for the candidate's: `runtime_error` with
`suspect_candidate`; one the probe shares stays `infra_error`, which carries no reward (`reward: null`).
The machine's failure is injected with ANVIL_INJECT_INFRA=TEXT[:N] (docs/verdict.md): the first N runs of
candidates whose path holds TEXT fail as if the machine had failed under them."""

import shutil

from conftest import EXAMPLES, eval_json

RELU = str(EXAMPLES / "tasks" / "relu.py")
HONEST = EXAMPLES / "candidates" / "relu" / "pass_native.cpp"
WRONG = EXAMPLES / "candidates" / "relu" / "wrong_answer_native.cpp"


def judge(candidate, inject, *flags):
    verdicts, proc = eval_json("-t", RELU, "-c", str(candidate), "-b", "cpu", "--no-perf", *flags,
                               env={"ANVIL_INJECT_INFRA": inject})
    assert len(verdicts) == 1, proc.stderr
    return verdicts[0]


def test_a_failure_that_goes_away_gives_the_verdict_of_the_try_that_worked(tmp_path):
    cand = tmp_path / "flaky_machine_native.cpp"
    shutil.copy(WRONG, cand)
    v = judge(cand, "flaky_machine:1")
    assert v["status"] == "wrong_answer" and v["infra_retries"] == 1, v
    assert "suspect_candidate" not in v and v["error"] is None
    # Why it was tried again stays said (the try that worked replaced the failed one's error).
    assert v["infra_retry_causes"] == ["running the candidate: a fault injected by ANVIL_INJECT_INFRA "
                                       "(docs/verdict.md)"], v["infra_retry_causes"]


def test_a_failure_that_recurs_with_this_candidate_only_is_the_candidates(tmp_path):
    cand = tmp_path / "always_breaks_native.cpp"
    shutil.copy(HONEST, cand)
    v = judge(cand, "always_breaks")
    assert v["status"] == "runtime_error" and v["suspect_candidate"] is True, v
    assert v["infra_retries"] == 2 and v["reward"] == -1 and v["error"] is None
    assert len(v["infra_retry_causes"]) == 2 and all("ANVIL_INJECT_INFRA" in c for c in v["infra_retry_causes"])
    assert "all 3 tries failed inside anvil" in v["feedback"], v["feedback"]
    assert v["feedback"].count("ANVIL_INJECT_INFRA") == 3  # Each try's cause, named.


def test_a_failure_the_health_probe_shares_stays_the_machines_and_carries_no_reward(tmp_path):
    cand = tmp_path / "also_pass_native.cpp"  # The probe's candidate is examples/candidates/relu/pass_native.cpp.
    shutil.copy(HONEST, cand)
    v = judge(cand, "pass_native")
    assert v["status"] == "infra_error" and v["reward"] is None, v
    assert "not tried again: the machine failed its health probe" in v["error"], v["error"]
    assert "pass_native.cpp was judged infra_error" in v["error"]
    assert "infra_retries" not in v and "suspect_candidate" not in v and "infra_retry_causes" not in v


def test_no_retries_when_asked_for_none(tmp_path):
    cand = tmp_path / "always_breaks_native.cpp"
    shutil.copy(HONEST, cand)
    v = judge(cand, "always_breaks", "--infra-retries", "0")
    assert v["status"] == "infra_error" and v["reward"] is None and "infra_retries" not in v, v


def test_a_retry_in_a_batch_runs_alone_and_the_other_verdicts_stand(tmp_path):
    """Four candidates side by side (-j 2), one of them breaking every time: its retries wait for the others to
    leave the machine and hold it alone; every verdict is right and none waits forever."""
    tasks, cands = tmp_path / "tasks", tmp_path / "candidates"
    tasks.mkdir()
    (cands / "relu").mkdir(parents=True)
    shutil.copy(RELU, tasks / "relu.py")
    for name, src in [("a_native.cpp", HONEST), ("b_breaks_native.cpp", HONEST), ("c_native.cpp", WRONG),
                      ("d_native.cpp", HONEST)]:
        shutil.copy(src, cands / "relu" / name)
    verdicts, proc = eval_json("-t", str(tasks), "-c", str(cands), "-b", "cpu", "--no-perf", "-j", "2",
                               env={"ANVIL_INJECT_INFRA": "b_breaks"}, timeout=600)
    by_name = {v["candidate"]["path"].rsplit("/", 1)[1]: v for v in verdicts}
    assert {n: v["status"] for n, v in by_name.items()} == {
        "a_native.cpp": "pass", "b_breaks_native.cpp": "runtime_error", "c_native.cpp": "wrong_answer",
        "d_native.cpp": "pass"}, proc.stderr
    assert by_name["b_breaks_native.cpp"]["suspect_candidate"] is True


def test_a_python_that_cannot_run_is_the_machines_failure_and_says_what_it_said():
    """Python failing outright (here /bin/false; under a descriptor limit on anvil itself it exits 127) is the
    machine's: `infra_error` saying so, where anvil once claimed PyTorch was not installed."""
    verdicts, proc = eval_json("-t", RELU, "-c", str(HONEST), "-b", "cpu", "--no-perf",
                               env={"ANVIL_PYTHON": "/bin/false"})
    assert len(verdicts) == 1, proc.stderr
    v = verdicts[0]
    assert v["status"] == "infra_error" and v["reward"] is None, v
    assert v["error"].startswith("cannot ask /bin/false where torch is (exit 1)"), v["error"]


def test_a_failure_the_tasks_own_reference_shares_stays_the_machines(tmp_path):
    """A task this machine cannot judge at all (on a GPU: one too large for its device memory) fails every candidate
    alike. Before the recurring failure is counted as the candidate's, the task's own reference runs as the candidate
    (`ModelNew = Model`, the legality rules off): when it fails inside anvil too, the verdict stays infra_error, with
    no reward, instead of every candidate's runtime_error."""
    task = tmp_path / "too_big_here.py"
    shutil.copy(RELU, task)
    cand = tmp_path / "too_big_here_native.cpp"
    shutil.copy(HONEST, cand)
    verdicts, proc = eval_json("-t", str(task), "-c", str(cand), "-b", "cpu", "--no-perf",
                               env={"ANVIL_INJECT_INFRA": "too_big_here"})
    assert len(verdicts) == 1, proc.stderr
    v = verdicts[0]
    assert v["status"] == "infra_error" and v["reward"] is None and "suspect_candidate" not in v, v
    assert v["infra_retries"] == 2, v
    assert "not counted as the candidate's: the task's own reference, run as the candidate, failed inside anvil too" \
        in v["error"], v["error"]
    assert "ANVIL_INJECT_INFRA" in v["error"].split("not counted")[1]  # The reference's own cause, named.
