"""Named verdict policies (docs/rules.md, "Policies"): the same candidates under musacoder, kernelbench and
kernelbench-v0.1, each verdict naming the rules it was judged under."""

import json

from conftest import EXAMPLES, cache_dir, eval_json, run_anvil, validate

RELU = str(EXAMPLES / "tasks" / "relu.py")
CANDS = EXAMPLES / "candidates"
DECOY = str(CANDS / "relu" / "cheat_kb.py")  # Builds a ReLU kernel, returns torch.relu(x).


def judge(candidate, policy, *args, task=RELU):
    verdicts, proc = eval_json("--task", task, "--candidate", str(candidate), "--no-perf", "--policy", policy, *args)
    assert proc.returncode == 0 and len(verdicts) == 1, proc.stderr
    return verdicts[0]


def rules(v, severity):
    return [h["rule"] for h in v["gates"]["legal"]["hits"] if h["severity"] == severity]


def test_torch_compute_is_a_cheat_under_musacoder_and_evidence_under_kernelbench(schema):
    musacoder = judge(DECOY, "musacoder")
    assert musacoder["status"] == "cheat" and "py.torch_compute" in rules(musacoder, "cheat")
    for policy in ("kernelbench", "kernelbench-v0.1"):
        v = judge(DECOY, policy)
        validate(v, schema)
        assert v["status"] == "pass", (policy, v["feedback"])
        assert v["policy"] == {"name": policy, "version": 1, "overrides": {}}
        assert rules(v, "cheat") == []
        # What it did is still on record: the static finding and the aten op its forward dispatched.
        assert {"py.torch_compute", "run.aten_compute"} <= set(rules(v, "evidence"))
        allowed = next(h for h in v["gates"]["legal"]["hits"] if h["rule"] == "run.aten_compute")
        assert f"policy {policy} allows it" in allowed["message"]


def test_a_candidate_that_computes_with_torch_is_timed_under_kernelbench():
    verdicts, proc = eval_json("--task", RELU, "--candidate", DECOY, "--policy", "kernelbench", "--iters", "3",
                               "--warmup", "1", "--baselines", "eager")
    v = verdicts[0]
    assert v["status"] == "pass", (proc.stderr[-2000:], v["feedback"])
    assert v["gates"]["perf"]["ran"] and v["gates"]["perf"]["speedup_eager"] > 0


def test_kernelbench_static_checker_is_strict_and_v01_has_none(tmp_path):
    # An honest kernel whose __init__ has a `pass` statement: KernelBench's checker forbids any.
    text = (CANDS / "relu" / "pass_kb.py").read_text()
    with_pass = tmp_path / "with_pass_kb.py"
    with_pass.write_text(text.replace("        super().__init__()\n", "        super().__init__()\n        pass\n", 1))
    assert judge(with_pass, "musacoder")["status"] == "pass"
    kb = judge(with_pass, "kernelbench")
    assert kb["status"] == "cheat" and rules(kb, "cheat") == ["kb.code_bypass"]
    assert "kb.code_bypass" in kb["feedback"]
    assert judge(with_pass, "kernelbench-v0.1")["status"] == "pass"


def test_tolerances_come_from_the_policy_then_the_sidecar_then_the_flags():
    cand = CANDS / "relu" / "pass_kb.py"
    outputs = lambda v: v["gates"]["correct"]["details"][0]["outputs"][0]
    assert (outputs(judge(cand, "musacoder"))["atol"], outputs(judge(cand, "kernelbench-v0.1"))["rtol"]) == (1e-4, 1e-2)
    v = judge(cand, "kernelbench-v0.1", "--atol", "0.5")
    assert (outputs(v)["atol"], outputs(v)["rtol"]) == (0.5, 1e-2)
    assert v["policy"]["overrides"] == {"atol": 0.5}
    # softmax.anvil.json sets float32's tolerance: an override of the policy's, on record.
    softmax = judge(CANDS / "softmax" / "pass_native.cpp", "kernelbench-v0.1", task=str(EXAMPLES / "tasks" / "softmax.py"))
    assert softmax["policy"]["overrides"] == {"sidecar.float32.atol": 1e-4, "sidecar.float32.rtol": 1e-4}
    assert outputs(softmax)["atol"] == 1e-4


def test_a_resumed_run_judges_again_what_another_policy_judged(tmp_path):
    out = tmp_path / "verdicts.jsonl"
    args = ("eval", "--task", RELU, "--candidate", str(CANDS / "relu" / "pass_native.cpp"), "--no-perf", "-q",
            "--cache-dir", cache_dir(), "--out", str(out))
    assert run_anvil(*args).returncode == 0
    assert run_anvil(*args).returncode == 0  # Same policy: nothing to do.
    assert len(out.read_text().splitlines()) == 1
    proc = run_anvil(*args, "--policy", "kernelbench")
    assert proc.returncode == 0, proc.stderr
    policies = [json.loads(line)["policy"]["name"] for line in out.read_text().splitlines()]
    assert policies == ["musacoder", "kernelbench"]
