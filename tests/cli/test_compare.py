"""`anvil compare`: two run databases made by `anvil generate` against the scripted OpenAI server, side by side:
each run's metrics as `anvil kernelbench --run RUN --json` gives them, the problems one run solves and the other
does not (matched by level and name), a warning where a problem's text or sample count differs, the speedup change
on problems both solve; text, JSON, and HTML drawn in headless Chromium."""

import json
import re
import shutil

import pytest

from conftest import EXAMPLES, NO_KEYS, ModelServer, cache_dir, run_anvil
from test_report import dom

RELU = EXAMPLES / "candidates" / "relu"


def fenced(name):
    return {"content": f"Here is my kernel.\n\n```python\n{(RELU / name).read_text()}```\n"}


def make_run(tmp, name, tasks, answers, samples=2):
    """tasks: {relative path: marker}; answers: {marker: [answer per sample]}."""
    folder = tmp / f"tasks-{name}"
    for path, marker in tasks.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(f"# {marker}\n" + (EXAMPLES / "tasks" / "relu.py").read_text())
    server = ModelServer(tmp, [{"content": "no code"}],
                         rules=[{"context": marker, "answers": [fenced(a) for a in said]}
                                for marker, said in answers.items()])
    out = tmp / f"{name}.db"
    try:
        proc = run_anvil("generate", "--endpoint", server.url, "--model", f"model-{name}", "--tasks", str(folder),
                         "--out", str(out), "--trials", "2", "--cache-dir", cache_dir(), "--concurrency", "1",
                         "--samples", str(samples), env=NO_KEYS, timeout=900)
        assert proc.returncode == 0, proc.stderr[-3000:]
    finally:
        server.stop()
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("compare")
    ok, wrong = "pass_kb.py", "wrong_answer_kb.py"
    a = make_run(tmp, "a", {"level1/19_ReLU.py": "task-19", "level1/20_ReLUToo.py": "task-20",
                            "level2/5_ReLU.py": "task-5"},
                 {"task-19": [ok, ok], "task-20": [wrong, wrong], "task-5": [ok, wrong]})
    b = make_run(tmp, "b", {"level1/19_ReLU.py": "task-19", "level1/20_ReLUToo.py": "task-20",
                            "level2/5_ReLU.py": "task-5 changed", "level3/7_Only.py": "task-7"},
                 {"task-19": [ok, wrong], "task-20": [ok, ok], "task-5 changed": [wrong, wrong], "task-7": [ok, ok]})
    return a, b


def test_the_comparison_says_what_each_run_solved(runs, tmp_path):
    a, b = runs
    proc = run_anvil("compare", str(a), str(b), "--json")
    assert proc.returncode == 0, proc.stderr
    c = json.loads(proc.stdout)
    assert c["a"]["model"] == "model-a" and c["b"]["model"] == "model-b"
    assert c["problems"] == {"matched": 3, "only_a": [], "only_b": ["level 3 7_Only"]}
    assert c["solved"] == {"both": 1, "only_a": ["level 2 5_ReLU"], "only_b": ["level 1 20_ReLUToo"]}
    assert any("level 2 5_ReLU: the task's text differs" in w for w in c["warnings"])
    assert not any("19_ReLU" in w for w in c["warnings"])
    # Each run's own metrics, as anvil kernelbench gives them at its last turn.
    for side, db in (("a", a), ("b", b)):
        kb = json.loads(run_anvil("kernelbench", "--run", str(db), "--json").stdout)["turns"][-1]
        assert c["overall"][side] == kb["overall"]
        levels = {lv["level"]: lv[side] for lv in c["levels"] if lv[side] is not None}
        assert levels == {lv["level"]: lv for lv in kb["levels"]}
    assert [lv["level"] for lv in c["levels"]] == [1, 2, 3] and c["levels"][2]["a"] is None
    # The one problem both solve, with its best eager speedup in each.
    (row,) = c["speedups"]
    assert row["problem"] == "level 1 19_ReLU" and row["a"] > 0 and row["b"] > 0
    assert row["change"] == pytest.approx(row["b"] / row["a"])
    assert c["speedup_change_geomean"] == pytest.approx(row["change"])

    text = run_anvil("compare", str(a), str(b), "-o", str(tmp_path / "c.html"))
    assert text.returncode == 0, text.stderr
    assert "B only: level 1 20_ReLUToo" in text.stdout and "A only: level 2 5_ReLU" in text.stdout
    assert "warning: level 2 5_ReLU: the task's text differs" in text.stdout
    pass1 = c["overall"]["a"]["pass_at_k_pct"]["1"], c["overall"]["b"]["pass_at_k_pct"]["1"]
    assert f"{pass1[0]:.1f} -> {pass1[1]:.1f}" in text.stdout
    shown = dom(tmp_path / "c.html")
    assert 'data-ready="1"' in shown  # its script ran under its policy
    assert re.search(r'<ul class="solved-b"><li>level 1 20_ReLUToo</li></ul>', shown)
    assert "the task's text differs" in shown
    cell = re.search(r'<tr class="all">.*?data-key="Pass@1 B" data-value="([^"]+)"', shown, re.S).group(1)
    assert json.loads(cell) == pass1[1]


def test_what_it_refuses(runs, tmp_path):
    a, _ = runs
    notdb = tmp_path / "x.txt"
    notdb.write_text("hi")
    proc = run_anvil("compare", str(a), str(notdb))
    assert proc.returncode == 2 and "not a run database" in proc.stderr
    proc = run_anvil("compare", str(a), str(a), "--turn", "4")
    assert proc.returncode == 2 and "--turn 4" in proc.stderr
