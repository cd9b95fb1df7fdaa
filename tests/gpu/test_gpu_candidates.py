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


def headers(files, key):
    """{file name: value} of the `anvil-<key>:` header line (`expect`: the status; `rule`: for a cheat, the rules
    that must name it, separated by spaces)."""
    out = {}
    for f in files:
        m = re.search(rf"anvil-{key}:[ \t]*([\w. \t]+)", f.read_text()[:2048])
        if m:
            out[f.name] = m.group(1).strip()
    return out


def problems():
    return sorted({re.match(r"(level_\d+_problem_\d+)_", f.name).group(1) for f in RUN.glob("level_*_kernel.*")},
                  key=lambda p: tuple(int(x) for x in re.findall(r"\d+", p)))


def done_names(out):
    if not out.exists():
        return set()
    return {Path(json.loads(line)["candidate"]["path"]).name for line in out.read_text().splitlines() if line.strip()}


def prewarm(anvil, root, files):
    """Compile the candidates in parallel first (compile gate only): the run itself is sequential."""
    import concurrent.futures

    def build(f):
        level, problem = f.name.split("_")[1], f.name.split("_")[3]
        task = next(Path(root, f"level{level}").glob(f"{problem}_*.py"))
        subprocess.run([anvil, "eval", "--backend", "cuda", "--task", str(task), "--candidate", str(f), "-q"],
                       capture_output=True, env=dict(os.environ, ANVIL_ASSUME_NO_GPU="1"), timeout=1200)

    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 8) as pool:
        list(pool.map(build, files))


def settings():
    anvil = os.environ.get("ANVIL_BIN") or str(ROOT / "build" / "anvil")
    root = os.environ.get("ANVIL_KERNELBENCH") or str(ROOT.parent / "shared" / "kernelbench")
    return anvil, root


@pytest.fixture(scope="module")
def verdict_file(request, tmp_path_factory):
    """The shared verdict file, after compiling every selected problem's pending candidates in one parallel pass."""
    out = Path(os.environ.get("ANVIL_GPU_OUT") or tmp_path_factory.mktemp("gpu")) / "gpu_verdicts.jsonl"
    selected = {item.callspec.params["problem"] for item in request.session.items
                if hasattr(item, "callspec") and "problem" in item.callspec.params}
    files = [f for p in sorted(selected) for f in sorted(RUN.glob(f"{p}_sample_*_kernel.*"))]
    prewarm(*settings(), [f for f in files if f.name not in done_names(out)])
    return out


@pytest.mark.parametrize("problem", problems())
def test_gpu_candidates_get_expected_status(problem, verdict_file, tmp_path):
    """One problem's candidates, run as a KernelBench run folder of their own.

    With ANVIL_GPU_OUT set, verdicts go to $ANVIL_GPU_OUT/gpu_verdicts.jsonl and a rerun resumes from it (the
    device budget can split the suite over several calls); `anvil kernelbench --out` that file prints the table.
    """
    anvil, root = settings()
    out = verdict_file
    files = sorted(RUN.glob(f"{problem}_sample_*_kernel.*"))
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    for f in files:
        (run_dir / f.name).symlink_to(f)
    cmd = [anvil, "kernelbench", "--run", str(run_dir), "--kernelbench", root, "--backend", "cuda", "--out", str(out),
           "--trials", os.environ.get("ANVIL_GPU_TRIALS", "3"), "--timeout", os.environ.get("ANVIL_GPU_TIMEOUT", "60"),
           "--iters", "10", "--baselines", os.environ.get("ANVIL_GPU_BASELINES", "eager"), "--json",
           "--jobs", os.environ.get("ANVIL_GPU_JOBS", "1")]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=3000)
    sys.stderr.write(proc.stderr[-4000:])
    assert proc.returncode == 0, proc.stderr[-4000:]
    want = headers(files, "expect")
    assert want, f"no candidate of {problem} declares anvil-expect"
    got = {}
    for line in out.read_text().splitlines():
        if line.strip():
            v = json.loads(line)
            got[Path(v["candidate"]["path"]).name] = v
    missing = sorted(set(want) - set(got))
    assert not missing, f"no verdict for {missing}"
    wrong = [f"{n}: got {got[n]['status']}, want {s}: {got[n]['feedback'][:300]}" for n, s in want.items()
             if got[n]["status"] != s]
    assert not wrong, "\n".join(wrong)
    for n, rules in headers(files, "rule").items():
        cheats = [h["rule"] for h in got[n]["gates"]["legal"]["hits"] if h["severity"] == "cheat"]
        for rule in rules.split():
            assert rule in cheats, f"{n}: want rule {rule}, got {cheats}: {got[n]['feedback'][:300]}"
    # Every timed candidate's kernels were traced, and the trace found its own kernels doing the work.
    if os.environ.get("ANVIL_KERNEL_TRACE") != "0":
        for n, v in got.items():
            if n in want and v["status"] == "pass":
                trace = v["gates"]["perf"]["trace"]
                assert trace and trace["ran"], f"{n}: no kernel trace: {trace}"
                assert trace["own_share"] is not None and trace["own_share"] >= 0.5, f"{n}: {trace}"


def test_gpu_suite_covers_three_levels():
    levels = {int(p.split("_")[1]) for p in problems()}
    assert levels == {1, 2, 3}
    assert len(problems()) >= 10
