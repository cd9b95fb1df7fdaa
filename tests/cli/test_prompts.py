"""The prompts' worked examples are candidates anvil judges like any other: a prompt must never teach a pattern anvil
would reject. (The CUDA examples are judged by the GPU suite.)"""

from conftest import ROOT, eval_json

ONE_SHOT = ROOT / "prompts" / "kernelbench-one-shot"


def test_the_one_shot_cpu_examples_pass_on_their_reference():
    got, proc = eval_json("--task", str(ONE_SHOT / "example_reference.py"), "--candidate",
                          str(ONE_SHOT / "example_cpu_kernelbench.py"), str(ONE_SHOT / "example_cpu_native.cpp"),
                          "--trials", "2", "--no-perf")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert len(got) == 2
    for v in got:
        assert v["status"] == "pass", (v["candidate"]["path"], v["feedback"])
        assert not [h for h in v["gates"]["legal"]["hits"] if h["severity"] == "cheat"]
