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
