"""On a GPU one task is prepared at a time (issue 38: a batch's compile lanes started one multi-GB preparation each
at once and the device ran out of memory, 12 infra_errors in one KernelBench run on an H100). ANVIL_PREPARE_ALONE=1
makes the cpu backend take turns the same way, so the rule is tested here; =0 lets them overlap."""

import re

from conftest import EXAMPLES, eval_json

# The ReLU task, whose preparation (and only that: the task worker's `prepare`) logs when it builds the model and
# takes 2 s doing so.
SLOW_PREPARE = '''
import os as _os, sys as _sys, time as _time

def get_init_inputs():
    if "prepare" in _sys.argv:
        with open(LOG, "a") as f:
            f.write(f"start {_os.getpid()} {_time.time()}\\n")
        _time.sleep(2)
        with open(LOG, "a") as f:
            f.write(f"end {_os.getpid()} {_time.time()}\\n")
    return []
'''


def preparations(tmp_path, alone):
    log = tmp_path / f"log_{alone}.txt"
    jobs = tmp_path / f"jobs_{alone}.jsonl"
    lines = []
    for name in ("a", "b"):
        task = tmp_path / f"relu_{alone}_{name}.py"
        source = (EXAMPLES / "tasks" / "relu.py").read_text()
        task.write_text(source + f"\nLOG = {str(log)!r}  # task {name}\n" + SLOW_PREPARE)
        lines.append(f'{{"task": "{task}", "candidate": "{EXAMPLES / "candidates" / "relu" / "pass_kb.py"}"}}\n')
    jobs.write_text("".join(lines))
    verdicts, p = eval_json("--list", str(jobs), "-j", "2", "--baselines", "none", "--no-perf",
                            env={"ANVIL_PREPARE_ALONE": alone})
    assert [v["status"] for v in verdicts] == ["pass", "pass"], p.stderr
    spans = {}
    for kind, pid, t in re.findall(r"(start|end) (\d+) ([\d.]+)", log.read_text()):
        lo, hi = spans.get(pid, (float("inf"), 0.0))
        spans[pid] = (min(lo, float(t)), hi) if kind == "start" else (lo, max(hi, float(t)))
    assert len(spans) == 2, spans
    (a0, a1), (b0, b1) = sorted(spans.values())
    return a0, a1, b0, b1


def test_preparations_take_turns_when_asked(tmp_path):
    a0, a1, b0, b1 = preparations(tmp_path, "1")
    assert b0 >= a1, "the second preparation began before the first ended"
    a0, a1, b0, b1 = preparations(tmp_path, "0")
    assert b0 < a1, "side by side, the two preparations should overlap"


# A task whose first preparation is refused device memory (the task server and a candidate beside it held the
# device: bench/results/all_problems_h100_call7.md, L1 52), logging each try of its preparation.
REFUSED_ONCE = '''
import os as _os, sys as _sys, time as _time
import torch as _torch

def get_inputs():
    if "prepare" in _sys.argv:
        with open(LOG, "a") as f:
            f.write(f"try {_os.getpid()} {_time.time()}\\n")
        if ALWAYS or not _os.path.exists(LOG + ".refused"):
            open(LOG + ".refused", "w").close()
            raise _torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 8.00 GiB. GPU 0 has a total "
                                          "capacity of 79.18 GiB of which 5.99 GiB is free.")
    return [_torch.randn(16, 1024)]
'''


def refused_task(tmp_path, name, always):
    log = tmp_path / f"{name}.log"
    task = tmp_path / f"{name}.py"
    source = (EXAMPLES / "tasks" / "relu.py").read_text()
    task.write_text(source + f"\nLOG = {str(log)!r}\nALWAYS = {always}\n" + REFUSED_ONCE)
    return task, log


def test_a_preparation_refused_memory_is_prepared_again_with_the_device_alone(tmp_path):
    refused, refused_log = refused_task(tmp_path, "refused", False)
    slow_log = tmp_path / "slow.log"
    slow = tmp_path / "slow.py"
    slow.write_text((EXAMPLES / "tasks" / "relu.py").read_text() + f"\nLOG = {str(slow_log)!r}\n" + SLOW_PREPARE)
    candidate = EXAMPLES / "candidates" / "relu" / "pass_kb.py"
    jobs = tmp_path / "jobs.jsonl"
    jobs.write_text("".join(f'{{"task": "{t}", "candidate": "{candidate}"}}\n' for t in (slow, refused)))
    verdicts, p = eval_json("--list", str(jobs), "-j", "2", "--baselines", "none", "--no-perf",
                            env={"ANVIL_PREPARE_ALONE": "0"})
    assert [v["status"] for v in verdicts] == ["pass", "pass"], (p.stderr, [v.get("error") for v in verdicts])
    tries = {}  # Each preparation is a worker process of its own, calling get_inputs for each trial.
    for pid, t in re.findall(r"try (\d+) ([\d.]+)", refused_log.read_text()):
        tries.setdefault(pid, float(t))
    tries = sorted(tries.values())
    assert len(tries) == 2, tries
    # The first try overlapped the slow task's preparation; the second waited for the device alone.
    slow_end = max(float(t) for t in re.findall(r"end \d+ ([\d.]+)", slow_log.read_text()))
    slow_start = min(float(t) for t in re.findall(r"start \d+ ([\d.]+)", slow_log.read_text()))
    assert tries[0] < slow_end and tries[1] >= slow_end, (tries, slow_start, slow_end)


def test_a_preparation_refused_memory_even_alone_says_so(tmp_path):
    task, log = refused_task(tmp_path, "always", True)
    jobs = tmp_path / "jobs.jsonl"
    candidate = EXAMPLES / "candidates" / "relu" / "pass_kb.py"
    jobs.write_text("".join(f'{{"task": "{t}", "candidate": "{candidate}"}}\n'
                            for t in (task, EXAMPLES / "tasks" / "relu.py")))  # A batch goes on past a broken task.
    verdicts, p = eval_json("--list", str(jobs), "--baselines", "none", "--no-perf")
    assert [v["status"] for v in verdicts] == ["infra_error", "pass"], p.stderr
    error = verdicts[0]["error"]
    assert "out of memory" in error and "with the device alone" in error, error
    assert len(set(re.findall(r"try (\d+) ", log.read_text()))) == 2
