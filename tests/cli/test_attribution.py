"""The machine's failures are never the candidate's, and the candidate's never the machine's (issue 35, step 4): a
candidate must not reach `infra_error` (a neutral reward) by its own doing. Each hostile case here once did."""

from conftest import EXAMPLES, ROOT, eval_json

RELU = str(EXAMPLES / "tasks" / "relu.py")
INFRA = ROOT / "tests" / "redteam" / "infra"


def judge(candidate):
    verdicts, proc = eval_json("-t", RELU, "-c", str(candidate), "-b", "cpu", "--no-perf")
    assert len(verdicts) == 1, proc.stderr
    return verdicts[0]


def test_a_nan_argument_to_load_inline_is_the_candidates_failure():
    # It made the extraction's own record unreadable (NaN in its JSON): infra_error, until the worker checked what
    # load_inline was given and anvil took unreadable extraction output as the candidate's.
    v = judge(INFRA / "nan_with_cuda_kb.py")
    assert v["status"] == "runtime_error", v["feedback"]
    assert v["error"] is None
    assert v["gates"]["run"]["stage"] == "import"
    assert "load_inline(with_cuda=nan): anvil takes True, False or None" in v["gates"]["run"]["message"]
    assert v["reward"] == -1
    # Its honest twin (the same call with with_cuda left alone) passes.
    twin = judge(EXAMPLES / "candidates" / "relu" / "pass_kb.py")
    assert twin["status"] == "pass", twin["feedback"]
