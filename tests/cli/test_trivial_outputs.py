"""Outputs that say nothing cannot pass (docs/rules.md, "Outputs that say nothing"; tests/redteam/trivial): for each
trivial form, a candidate on a task where the tolerance once accepted it ends in a non-pass verdict under musacoder on
the CPU backend, its honest twin passes, and under kernelbench (no guard) the trivial one passes as it would there."""

import re

import pytest

from conftest import EXAMPLES, ROOT, eval_json, validate

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
