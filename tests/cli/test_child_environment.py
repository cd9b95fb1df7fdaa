"""A secret in anvil's environment (a model's API key) never reaches a child: candidates that print their environment
into their own feedback (Python and native) find no secret there. (The compilers' environment is built the same way,
core/child_env.h; they cannot quote it: gcc and gas read a /proc file as empty.)

The candidates (tests/data/child_env/) put every variable's name, and each entry that holds the marker
`anvil-env-probe`, into an error message that the verdict's feedback carries. The secrets carry the marker too, so a
secret that got through would be quoted whole; a variable that children may see (ANVIL_*) is the control that shows
the dump reached the feedback."""

import json
import os

import pytest

from conftest import EXAMPLES, ROOT, eval_json

RELU = str(EXAMPLES / "tasks" / "relu.py")
CANDS = ROOT / "tests" / "data" / "child_env"
SECRET = "sk-anvil-env-probe-do-not-leak"
SECRETS = {"OPENAI_API_KEY": SECRET, "ANVIL_OPENAI_API_KEY": SECRET, "HF_TOKEN": SECRET,
           "AWS_SECRET_ACCESS_KEY": SECRET, "SOME_SERVICE_URL": "https://user:" + SECRET + "@example.com",
           "ANVIL_OPENAI_BASE_URL": "https://user:" + SECRET + "@example.com/v1"}
VISIBLE = ("ANVIL_ENV_PROBE_VISIBLE", "anvil-env-probe-visible")
# ANVIL_STATIC_VERDICTS=0: the static rules would reject reading /proc first; the point here is what the child sees.
ENV = {**SECRETS, VISIBLE[0]: VISIBLE[1], "ANVIL_STATIC_VERDICTS": "0"}


@pytest.fixture(scope="module")
def verdicts():
    names = ["env_dump_kb.py", "env_dump_native.cpp"]
    got, proc = eval_json("--task", RELU, "--candidate", *[str(CANDS / n) for n in names], "--trials", "1",
                          "--no-perf", env=ENV)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    assert SECRET not in proc.stdout + proc.stderr
    return {os.path.basename(v["candidate"]["path"]): v for v in got}


@pytest.mark.parametrize("name", ["env_dump_kb.py", "env_dump_native.cpp"])
def test_a_candidate_that_prints_its_environment_finds_no_secret(verdicts, name):
    v = verdicts[name]
    assert v["status"] == "runtime_error", v["feedback"]
    feedback = v["feedback"]
    # The control: the dump reached the feedback, with both views of the environment.
    assert f"{VISIBLE[0]}={VISIBLE[1]}" in feedback, feedback
    assert "proc: " in feedback and "unreadable" not in feedback, feedback
    assert "PATH" in feedback, feedback
    text = json.dumps(v)
    assert SECRET not in text, feedback
    for name in SECRETS:
        assert name not in feedback, feedback

