"""What each verdict says: compile diagnostics on the candidate's own lines, mismatch details, rules."""

import json

from conftest import EXAMPLES, ROOT, eval_json, validate

RELU = str(EXAMPLES / "tasks" / "relu.py")
CANDS = EXAMPLES / "candidates"


def line_of(path, needle):
    for i, line in enumerate(path.read_text().splitlines(), 1):
        if needle in line:
            return i
    raise AssertionError(f"{needle!r} not in {path}")


def test_compile_error_native_points_at_the_candidate_line():
    cand = CANDS / "relu" / "compile_error_native.cpp"
    verdicts, _ = eval_json("--task", RELU, "--candidate", str(cand))
    v = verdicts[0]
    assert v["status"] == "compile_error"
    errors = [d for d in v["gates"]["compile"]["diagnostics"] if d["severity"] in ("error", "fatal")]
    assert errors, v["gates"]["compile"]
    assert errors[0]["file"] == "compile_error_native.cpp"
    assert errors[0]["in_candidate"]
    src_line = cand.read_text().splitlines()[errors[0]["line"] - 1]
    assert src_line.strip(), "diagnostic line must be a real line of the candidate"
    assert f'compile_error_native.cpp:{errors[0]["line"]}' in v["feedback"]
    assert v["reward"] == -1


def test_compile_error_kernelbench_maps_into_the_python_file():
    cand = CANDS / "relu" / "compile_error_kb.py"
    verdicts, _ = eval_json("--task", RELU, "--candidate", str(cand))
    v = verdicts[0]
    assert v["status"] == "compile_error", v["feedback"]
    errors = [d for d in v["gates"]["compile"]["diagnostics"] if d["severity"] in ("error", "fatal")]
    assert errors
    e = errors[0]
    assert e["file"] == "compile_error_kb.py" and e["in_candidate"], e
    assert 1 <= e["line"] <= len(cand.read_text().splitlines())
    assert "compile_error_kb.py:" in v["feedback"]


def test_wrong_answer_reports_where_and_by_how_much():
    verdicts, _ = eval_json("--task", RELU, "--candidate", str(CANDS / "relu" / "wrong_answer_native.cpp"))
    v = verdicts[0]
    assert v["status"] == "wrong_answer"
    c = v["gates"]["correct"]
    assert c["trials"] == 5 and c["passed"] == 0
    out = c["details"][0]["outputs"][0]
    assert out["mismatches"] > 0 and out["first_mismatch"] is not None
    assert len(out["first_mismatch_index"]) == 2
    assert out["atol"] == 1e-4 and out["rtol"] == 1e-4
    # Half the output is never written: the NaN poison shows it.
    assert out["nonfinite_mismatches"] > 0
    assert "NaN" in v["feedback"] and "First mismatch at index" in v["feedback"]
    assert v["gates"]["perf"]["ran"] is False


def test_cheat_names_rule_and_line():
    verdicts, _ = eval_json("--task", str(EXAMPLES / "tasks" / "matmul.py"), "--candidate",
                            str(CANDS / "matmul" / "cheat_kb.py"))
    v = verdicts[0]
    assert v["status"] == "cheat"
    hits = [h for h in v["gates"]["legal"]["hits"] if h["severity"] == "cheat"]
    assert hits and all(h["rule"] and h["line"] > 0 and h["excerpt"] for h in hits)
    assert hits[0]["rule"] in v["feedback"]


def test_tolerance_override_changes_the_verdict():
    # The leaky-relu candidate differs by a little: a loose tolerance accepts it.
    cand = str(CANDS / "relu" / "wrong_answer_kb.py")
    verdicts, _ = eval_json("--task", RELU, "--candidate", cand, "--no-perf")
    assert verdicts[0]["status"] == "wrong_answer"
    assert verdicts[0]["policy"] == {"name": "musacoder", "version": 1, "overrides": {}}
    verdicts, _ = eval_json("--task", RELU, "--candidate", cand, "--no-perf", "--atol", "10", "--rtol", "10")
    assert verdicts[0]["status"] == "pass"
    # The verdict says which of the policy's rules the run replaced.
    assert verdicts[0]["policy"] == {"name": "musacoder", "version": 1, "overrides": {"atol": 10.0, "rtol": 10.0}}


def test_baselines_are_measured_once_and_cached():
    cand = str(CANDS / "relu" / "pass_native.cpp")
    first, proc = eval_json("--task", RELU, "--candidate", cand, "--iters", "3", "--baselines", "eager,compile")
    assert proc.returncode == 0, proc.stderr
    perf = first[0]["gates"]["perf"]
    assert perf["ran"] and perf["eager"] and perf["compile"], perf
    assert perf["speedup_eager"] > 0 and perf["speedup_compile"] > 0
    assert perf["compile"]["samples"] == 3
    again, _ = eval_json("--task", RELU, "--candidate", cand, "--iters", "3", "--baselines", "eager,compile")
    # Cached per task: the same baseline numbers come back without re-timing.
    assert again[0]["gates"]["perf"]["eager"] == perf["eager"]
    assert again[0]["gates"]["perf"]["compile"] == perf["compile"]


def test_gpu_verdicts_from_the_h200_match_the_schema(schema):
    """Two verdicts the H200 produced (tests/data/gpu_verdicts_h200.jsonl: a pass with its kernel trace, and the D1
    cheat named by trace.event_mismatch): what only a GPU writes (perf.trace, the trace stage) stays in the
    schema that CPU runs cannot exercise. Made at schema 1; moved to 2 by adding the policy they were judged under
    (musacoder 1), which is all version 2 asks of a version-1 verdict."""
    lines = (ROOT / "tests" / "data" / "gpu_verdicts_h200.jsonl").read_text().splitlines()
    verdicts = [json.loads(line) for line in lines]
    assert {v["status"] for v in verdicts} == {"pass", "cheat"}
    for v in verdicts:
        assert v["gates"]["perf"]["trace"] is None or "own_share" in v["gates"]["perf"]["trace"]
        validate(v, schema)
    cheat = next(v for v in verdicts if v["status"] == "cheat")
    assert "trace.event_mismatch" in [h["rule"] for h in cheat["gates"]["legal"]["hits"]]
