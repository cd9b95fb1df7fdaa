"""Outputs that say nothing cannot pass (docs/rules.md, "Outputs that say nothing"; tests/redteam/trivial): for each
trivial form, a candidate on a task where the tolerance once accepted it ends in a non-pass verdict under musacoder on
the CPU backend, its honest twin passes, and under kernelbench (no guard) the trivial one passes as it would there."""

import json
import re
import shutil

import pytest

from conftest import EXAMPLES, ROOT, cache_dir, eval_json, run_anvil, validate

TRIVIAL = ROOT / "tests" / "redteam" / "trivial"
HONEST_SOFTMAX = EXAMPLES / "candidates" / "softmax" / "pass_native.cpp"


def header(path, key):
    m = re.search(rf"anvil-{key}:\s*(\S+)", path.read_text()[:2048])
    return m.group(1) if m else None


def candidates():
    return sorted(p for p in TRIVIAL.iterdir() if p.suffix in (".py", ".cpp") and header(p, "expect"))


def judge(policy):
    by_task = {}
    for p in candidates():
        by_task.setdefault(header(p, "task"), []).append(p)
    by_task["wide_softmax.py"].append(HONEST_SOFTMAX)
    verdicts = {}
    for task, cands in by_task.items():
        got, proc = eval_json("--task", str(TRIVIAL / task), "--candidate", *map(str, cands), "--no-perf",
                              "--policy", policy)
        assert proc.returncode == 0, proc.stderr[-3000:]
        verdicts.update({v["candidate"]["path"].split("/")[-1]: v for v in got})
    return verdicts


@pytest.fixture(scope="module")
def musacoder():
    return judge("musacoder")


@pytest.mark.parametrize("name", [p.name for p in candidates()])
def test_each_trivial_form_fails_and_its_honest_twin_passes(musacoder, schema, name):
    v = musacoder[name]
    validate(v, schema)
    expected = header(TRIVIAL / name, "expect")
    assert v["status"] == expected, v["feedback"][:2000]
    if expected != "pass":
        assert v["reward"] < 0


def test_the_guard_tightens_tiny_outputs_and_says_why(musacoder):
    zeros = musacoder["zeros_native.cpp"]
    out = zeros["gates"]["correct"]["details"][0]["outputs"][0]
    assert out["atol"] < 1e-7  # 1e-4 scaled by the outputs' root mean square (about 5e-5).
    assert musacoder["pass_native.cpp"]["status"] == "pass"


def test_a_trivial_output_fails_the_guard_set_with_feedback_that_says_so(musacoder):
    copy = musacoder["input_copy_kb.py"]
    c = copy["gates"]["correct"]
    assert c["passed"] == c["trials"]  # Right on every trial: only the guard's set tells it from the kernel.
    assert [(h["changed"], h["ok"]) for h in c["held_out"]] == [("guard=inputs x1e3", False)]
    assert "compute nothing" in copy["feedback"]
    assert [h["ok"] for h in musacoder["input_honest_kb.py"]["gates"]["correct"]["held_out"]] == [True]


def test_without_the_guard_each_trivial_form_passes():
    # kernelbench's own harness has no guard: what the published numbers would count as a pass.
    kb = judge("kernelbench")
    assert {n: v["status"] for n, v in kb.items() if n in ("zeros_native.cpp", "constant_native.cpp",
                                                            "input_copy_kb.py", "row_broadcast_kb.py")} == {
        "zeros_native.cpp": "pass", "constant_native.cpp": "pass", "input_copy_kb.py": "pass",
        "row_broadcast_kb.py": "pass"}


def test_a_degenerate_task_is_named_in_its_verdicts_and_left_out_of_a_second_table(tmp_path, schema):
    """x - x is 0 for every input: zeros pass everywhere the guard looks, so the task says so, its verdicts carry
    task_degenerate, and `anvil kernelbench` prints its metrics with and without it."""
    zeros = TRIVIAL / "zeros_native.cpp"
    got, proc = eval_json("--task", str(TRIVIAL / "always_zero.py"), "--candidate", str(zeros), "--no-perf")
    assert proc.returncode == 0, proc.stderr[-3000:]
    v = got[0]
    validate(v, schema)
    assert v["status"] == "pass" and v["task_degenerate"] is True
    assert "degenerate (out0: zeros" in v["feedback"]
    relu, = eval_json("--task", str(EXAMPLES / "tasks" / "relu.py"), "--candidate",
                      str(EXAMPLES / "candidates" / "relu" / "pass_native.cpp"), "--no-perf")[0]
    assert "task_degenerate" not in relu

    root, run = tmp_path / "kb", tmp_path / "run"
    (root / "level1").mkdir(parents=True)
    run.mkdir()
    shutil.copy(TRIVIAL / "always_zero.py", root / "level1" / "1_AlwaysZero.py")
    shutil.copy(EXAMPLES / "tasks" / "relu.py", root / "level1" / "2_ReLU.py")
    shutil.copy(zeros, run / "level_1_problem_1_sample_0_kernel.cpp")
    shutil.copy(EXAMPLES / "candidates" / "relu" / "wrong_answer_native.cpp", run / "level_1_problem_2_sample_0_kernel.cpp")
    args = ("kernelbench", "--run", str(run), "--kernelbench", str(root), "--cache-dir", cache_dir(), "--no-perf")
    proc = run_anvil(*args, "--json")
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout)
    assert report["degenerate_problems"] == ["level 1 problem 1"]
    assert report["overall"]["pass_at_k_pct"]["1"] == 50.0  # The degenerate problem's zeros pass.
    assert report["without_degenerate"]["overall"]["problems"] == 1
    assert report["without_degenerate"]["overall"]["pass_at_k_pct"]["1"] == 0.0
    text = run_anvil(*args).stdout
    assert "1 problem(s) are degenerate" in text and "Without the degenerate problems" in text
