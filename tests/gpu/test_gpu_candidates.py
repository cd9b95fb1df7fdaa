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


def test_gpu_candidates_get_expected_status(tmp_path):
    anvil = os.environ.get("ANVIL_BIN") or str(ROOT / "build" / "anvil")
    root = os.environ.get("ANVIL_KERNELBENCH") or str(ROOT.parent / "shared" / "kernelbench")
    out = Path(os.environ.get("ANVIL_GPU_OUT", tmp_path)) / "gpu_verdicts.jsonl"
    cmd = [anvil, "kernelbench", "--run", str(RUN), "--kernelbench", root, "--backend", "cuda", "--out", str(out),
           "--trials", os.environ.get("ANVIL_GPU_TRIALS", "3"), "--timeout", "120", "--json"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=3000)
    sys.stderr.write(proc.stderr[-4000:])
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
