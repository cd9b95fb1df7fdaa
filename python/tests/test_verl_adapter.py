"""The verl adapter called as verl calls it: the file loaded by its path (reward.custom_reward_function.path), its
function found by name and awaited per sample with the config's reward_kwargs, against the real `anvil serve`."""

import asyncio
import hashlib
import importlib.util
import inspect
import math
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RELU = (ROOT / "examples" / "tasks" / "relu.py").read_text()
CANDIDATES = ROOT / "examples" / "candidates" / "relu"


def load_compute_score():
    # What verl's get_custom_reward_fn does with a path and a name.
    spec = importlib.util.spec_from_file_location("custom_module", ROOT / "python" / "anvil_client" / "verl.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, "compute_score")


def answer(name, prose="Here is my kernel."):
    return f"{prose}\n\n```cpp\n{(CANDIDATES / name).read_text()}```\n"


def test_every_sample_answers_the_same_flat_keys(service):
    compute_score = load_compute_score()
    assert inspect.iscoroutinefunction(compute_score)  # verl awaits it rather than running it in a thread.
    kwargs = {"anvil_url": service, "backend": "cpu", "candidate_format": "native"}

    async def go():
        samples = [answer("pass_native.cpp"), "I cannot write this kernel.", answer("wrong_answer_native.cpp"),
                   answer("compile_error_native.cpp")]
        scores = await asyncio.gather(*[compute_score("anvil/relu", s, RELU, {"index": i}, **kwargs)
                                        for i, s in enumerate(samples)])
        # The task by its hash, once registered.
        from anvil_client import AsyncClient
        task_hash = await AsyncClient(service).register_task(RELU)
        assert task_hash == hashlib.sha256(RELU.encode()).hexdigest()
        scores.append(await compute_score("anvil/relu", answer("pass_native.cpp"), task_hash, None, **kwargs))
        # A verdict later than timeout_s: flagged, never a silent 0 (the job goes on in the service).
        scores.append(await compute_score("anvil/relu", answer("timeout_native.cpp"), RELU, None,
                                          **{**kwargs, "timeout_s": 0.5}))
        return scores

    passed, no_code, wrong, broken, by_hash, late = asyncio.run(go())
    for s in (passed, no_code, wrong, broken, by_hash, late):
        assert list(s) == ["score", "anvil_status_code", "anvil_q", "anvil_speedup", "anvil_infra_error",
                           "anvil_cached"]
        assert all(isinstance(v, (int, float)) for v in s.values())
    assert passed["anvil_status_code"] == 0 and passed["score"] >= 1.0 and passed["anvil_q"] == 1.0
    assert not math.isnan(passed["anvil_speedup"])
    assert no_code == {"score": -1.0, "anvil_status_code": 7, "anvil_q": 0.0, "anvil_speedup": no_code["anvil_speedup"],
                       "anvil_infra_error": 0, "anvil_cached": 0} and math.isnan(no_code["anvil_speedup"])
    assert wrong["anvil_status_code"] == 4 and wrong["score"] == -1.0
    assert broken["anvil_status_code"] == 1 and math.isnan(broken["anvil_speedup"])
    assert by_hash["anvil_status_code"] == 0
    assert late["anvil_infra_error"] == 1 and late["score"] == 0.0
