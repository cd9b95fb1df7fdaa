"""`anvil eval --backend cuda` as the GPU tests run it: the verdicts by candidate file name, kept under
$ANVIL_GPU_OUT (bench/scripts/gpu_suite.sh brings them back) when it is set."""

import json
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ANVIL = os.environ.get("ANVIL_BIN") or str(ROOT / "build" / "anvil")


def eval_cuda(task, candidates, args, keep_as, env=None):
    """{file name: verdict} of `anvil eval --backend cuda -q --json --task TASK --candidate CANDIDATES ARGS`, which
    must end 0 or 1 (a candidate failed); its output goes to $ANVIL_GPU_OUT/KEEP_AS.jsonl."""
    proc = subprocess.run([ANVIL, "eval", "--backend", "cuda", "-q", "--json", "--task", str(task), "--candidate",
                           *map(str, candidates), *map(str, args)], capture_output=True, text=True, timeout=900,
                          env=dict(os.environ, **(env or {})))
    assert proc.returncode in (0, 1), proc.stderr[-4000:]
    if os.environ.get("ANVIL_GPU_OUT"):
        Path(os.environ["ANVIL_GPU_OUT"], f"{keep_as}.jsonl").write_text(proc.stdout)
    text = proc.stdout.strip()
    try:
        verdicts = [json.loads(text)]  # One candidate: one verdict, pretty-printed.
    except json.JSONDecodeError:
        verdicts = [json.loads(line) for line in text.splitlines() if line.strip()]
    return {Path(v["candidate"]["path"]).name: v for v in verdicts}
