# anvil-test-label: gpu
"""GPU tests: the project's own CUDA candidates for KernelBench problems get their expected verdicts.

Runs `anvil kernelbench` over tests/gpu/kernelbench_run (KernelBench's run layout) on the cuda backend at the
problems' real sizes. Needs a GPU and the KernelBench problems ($ANVIL_KERNELBENCH or ../shared/kernelbench).
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "tests" / "gpu" / "kernelbench_run"


def has_gpu():
    return os.path.exists("/dev/nvidiactl") or os.path.exists("/dev/nvidia0")


pytestmark = pytest.mark.skipif(not has_gpu(), reason="needs an NVIDIA GPU")


def expected():
    out = {}
    for f in sorted(RUN.glob("level_*_kernel.*")):
        m = re.search(r"anvil-expect:\s*(\w+)", f.read_text()[:2048])
        if m:
            out[f.name] = m.group(1)
    return out


def prewarm(anvil, root):
    """Compile every candidate in parallel first (compile gate only): the run itself is sequential."""
    import concurrent.futures

    def build(f):
        level, problem = f.name.split("_")[1], f.name.split("_")[3]
        task = next(Path(root, f"level{level}").glob(f"{problem}_*.py"))
        subprocess.run([anvil, "eval", "--backend", "cuda", "--task", str(task), "--candidate", str(f), "-q"],
                       capture_output=True, env=dict(os.environ, ANVIL_ASSUME_NO_GPU="1"), timeout=1200)

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        list(pool.map(build, sorted(RUN.glob("level_*_kernel.*"))))


def test_gpu_candidates_get_expected_status(tmp_path):
    anvil = os.environ.get("ANVIL_BIN") or str(ROOT / "build" / "anvil")
    root = os.environ.get("ANVIL_KERNELBENCH") or str(ROOT.parent / "shared" / "kernelbench")
    out = Path(os.environ.get("ANVIL_GPU_OUT", tmp_path)) / "gpu_verdicts.jsonl"
    prewarm(anvil, root)
    cmd = [anvil, "kernelbench", "--run", str(RUN), "--kernelbench", root, "--backend", "cuda", "--out", str(out),
           "--trials", os.environ.get("ANVIL_GPU_TRIALS", "3"), "--timeout", os.environ.get("ANVIL_GPU_TIMEOUT", "60"),
           "--iters", "10", "--baselines", os.environ.get("ANVIL_GPU_BASELINES", "eager,compile"), "--json"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=3000)
    sys.stderr.write(proc.stderr[-4000:])
    sys.stdout.write(proc.stdout)
    assert proc.returncode == 0, proc.stderr[-4000:]
    verdicts = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    want = expected()
    got = {Path(v["candidate"]["path"]).name: v for v in verdicts}
    assert set(got) == set(want)
    wrong = [f"{n}: got {got[n]['status']}, want {s}: {got[n]['feedback'][:300]}" for n, s in want.items()
             if got[n]["status"] != s]
    assert not wrong, "\n".join(wrong)
    levels = {int(n.split("_")[1]) for n in want}
    assert levels == {1, 2, 3}
