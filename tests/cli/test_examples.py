"""Every bundled example pair gets its expected status, and every verdict validates against the schema."""

import re
from pathlib import Path

from conftest import EXAMPLES, eval_json, validate


def expected_statuses():
    out = {}
    for f in sorted((EXAMPLES / "candidates").glob("*/*")):
        m = re.search(r"anvil-expect:\s*(\w+)", f.read_text()[:2048])
        if m:
            out[str(f.resolve())] = m.group(1)
    return out


def test_every_example_gets_its_expected_status(schema):
    expected = expected_statuses()
    assert len(expected) >= 20
    # Two at a time (the examples include two 20 s hangs): as `anvil eval -j 2` is meant to be used.
    verdicts, proc = eval_json("--timeout", "20", "--baselines", "eager", "--iters", "5", "--check-expected", "-j", "2")
    assert len(verdicts) == len(expected), proc.stderr[-3000:]
    wrong = []
    for v in verdicts:
        validate(v, schema)
        want = expected[str(Path(v["candidate"]["path"]).resolve())]
        if v["status"] != want:
            wrong.append(f'{v["candidate"]["path"]}: got {v["status"]}, want {want}\n{v["feedback"]}')
    assert not wrong, "\n".join(wrong)
    assert proc.returncode == 0, proc.stderr[-3000:]
    statuses = {v["status"] for v in verdicts}
    assert statuses >= {"pass", "compile_error", "runtime_error", "timeout", "wrong_answer", "cheat"}
    for v in verdicts:
        if v["status"] == "pass":
            assert v["reward"] >= 1.0
            assert v["gates"]["perf"]["ran"], v["candidate"]["path"]
            assert v["gates"]["perf"]["eager"] is not None
        else:
            assert v["reward"] <= -0.5 + 0.5 * v["correctness_rate"] + 1e-9
        assert v["feedback"]


def test_human_summary_table():
    from conftest import cache_dir, run_anvil
    proc = run_anvil("eval", "--cache-dir", cache_dir(), "--task", str(EXAMPLES / "tasks" / "relu.py"),
                     "--candidate", str(EXAMPLES / "candidates" / "relu" / "pass_native.cpp"),
                     str(EXAMPLES / "candidates" / "relu" / "wrong_answer_native.cpp"), "--no-perf")
    assert proc.returncode == 0, proc.stderr
    assert "pass" in proc.stdout and "wrong_answer" in proc.stdout
    assert re.search(r"total\s+2", proc.stdout)
    assert "[2/2]" in proc.stderr  # progress display
