"""`anvil bench throughput`: the same candidates through anvil (cold, then warm) and the stock path, one report."""

import json
import shutil

from conftest import EXAMPLES, cache_dir, run_anvil

CANDS = EXAMPLES / "candidates" / "relu"


def make_run(tmp_path, files):
    root = tmp_path / "kb"
    (root / "level1").mkdir(parents=True)
    shutil.copy(EXAMPLES / "tasks" / "relu.py", root / "level1" / "1_ReLU.py")
    run = tmp_path / "run"
    run.mkdir()
    for i, f in enumerate(files):
        shutil.copy(f, run / f"level_1_problem_1_sample_{i}_kernel{f.suffix}")
    return root, run


def test_throughput_report_compares_anvil_with_the_stock_path(tmp_path):
    # Two copies of one candidate: in an RL batch every candidate is new, so the bench gives each its own
    # extension name and both are built cold.
    root, run = make_run(tmp_path, [CANDS / "pass_kb.py", CANDS / "pass_kb.py", CANDS / "pass_native.cpp"])
    report = tmp_path / "report.json"
    # The precompiled torch header from the tests' shared cache (ANVIL_PCH_CACHE): made once per machine, it would
    # otherwise double this test's time. The bench reports it when the cold pass builds it.
    proc = run_anvil("bench", "throughput", "--run", str(run), "--kernelbench", str(root), "--work",
                     str(tmp_path / "work"), "--trials", "2", "--iters", "5", "--stock-trials", "2",
                     "--stock-iters", "5", "--stock-sample", "1", "--baselines", "none", "--json-out", str(report), "-q",
                     env={"ANVIL_PCH_CACHE": cache_dir()})
    assert proc.returncode == 0, proc.stderr
    assert "1 native ones left out" in proc.stderr
    r = json.loads(report.read_text())
    assert [p["name"] for p in r["passes"]] == ["anvil_cold", "anvil_warm", "stock"]
    assert [p["candidates"] for p in r["passes"]] == [2, 2, 1]
    assert all(p["verdicts_per_hour"] > 0 for p in r["passes"])
    assert all(p["gpu_busy"] is None for p in r["passes"])  # No GPU here.
    assert r["renamed"] == 2 and "no two share a build" in proc.stdout
    first, second = r["candidates"]
    assert first["candidate"] != second["candidate"]
    assert "stock" not in second  # The sample of one is the first.
    c = first
    assert all(x["anvil_cold"]["status"] == "pass" and x["anvil_warm"]["status"] == "pass" for x in (first, second)), (
        [(x["anvil_cold"], x["anvil_warm"]) for x in (first, second)],
        (tmp_path / "work" / "cold_verdicts.jsonl").read_text()[-3000:])
    assert c["stock"]["compiled"] and c["stock"]["correct"] and c["stock"]["error"] == "", c["stock"]
    assert c["stock"]["phases"]["compile"] > 1  # load_inline built the extension from scratch.
    # Each stock outcome is also logged as it comes (a run cut short keeps them).
    logged = [json.loads(line) for line in (tmp_path / "work" / "stock_outcomes.jsonl").read_text().splitlines()]
    assert [x["candidate"] for x in logged] == [first["candidate"]] and logged[0]["correct"], logged
    cold, warm = r["stages_cold"], r["stages_warm"]
    # Both built cold (no shared build), neither warm (the artifact cache).
    cold_verdicts = [json.loads(line) for line in (tmp_path / "work" / "cold_verdicts.jsonl").read_text().splitlines()]
    assert [v["gates"]["compile"]["cached"] for v in cold_verdicts] == [False, False]
    # The torch PCH came from (or went to) the shared cache, not the bench's own.
    assert {v["gates"]["compile"]["pch"] for v in cold_verdicts} <= {"built", "cached"}, cold_verdicts[0]["gates"]
    assert not list((tmp_path / "work" / "cache" / "artifacts").glob("*/torch/extension.h"))
    assert cold["compile"]["n"] == 2 and cold["compile"]["mean"] > 1 and warm["compile"]["max"] < 0.5
    for phase in ("process.start", "process.load", "process.trials", "overhead", "compile_wait"):
        assert phase in cold and cold[phase]["n"] == 2, phase
    assert "anvil (cold) / stock" in proc.stdout and "| anvil_warm |" in proc.stdout
    # The stock path ran on 1 of the 2: the whole set's rate is estimated from it (no hang: the sample's mean).
    assert r["stock_estimate"]["seconds_per_candidate"] == c["stock"]["seconds"], r["stock_estimate"]
    assert "estimated from its sample" in proc.stdout


def test_throughput_needs_load_inline_candidates_and_a_fresh_work_folder(tmp_path):
    root, run = make_run(tmp_path, [CANDS / "pass_native.cpp"])
    proc = run_anvil("bench", "throughput", "--run", str(run), "--kernelbench", str(root))
    assert proc.returncode == 2 and "no kernelbench-format (.py) candidate" in proc.stderr
    root, run = make_run(tmp_path / "again", [CANDS / "pass_kb.py"])
    (tmp_path / "work" / "cache" / "x").mkdir(parents=True)
    proc = run_anvil("bench", "throughput", "--run", str(run), "--kernelbench", str(root), "--work",
                     str(tmp_path / "work"))
    assert proc.returncode == 2 and "needs a fresh --work" in proc.stderr
    proc = run_anvil("bench", "throughput", "--run", str(run), "--kernelbench", str(root), "--no-stock", "--no-anvil")
    assert proc.returncode == 2 and "leave nothing to run" in proc.stderr


def test_the_steady_and_fresh_passes_build_new_candidates_on_known_and_new_tasks(tmp_path):
    root, run = make_run(tmp_path, [CANDS / "pass_kb.py"])
    report = tmp_path / "report.json"
    proc = run_anvil("bench", "throughput", "--run", str(run), "--kernelbench", str(root), "--work",
                     str(tmp_path / "work"), "--trials", "2", "--iters", "5", "--baselines", "eager", "--no-warm",
                     "--no-stock", "--steady", "--fresh", "--json-out", str(report), "-q",
                     env={"ANVIL_PCH_CACHE": cache_dir()})
    assert proc.returncode == 0, proc.stderr
    r = json.loads(report.read_text())
    assert [p["name"] for p in r["passes"]] == ["anvil_cold", "anvil_steady", "anvil_fresh"]
    work = tmp_path / "work"
    cold, steady, fresh = ([json.loads(line) for line in (work / f"{name}_verdicts.jsonl").read_text().splitlines()]
                           for name in ("cold", "steady", "fresh"))
    assert [v["status"] for v in cold + steady + fresh] == ["pass", "pass", "pass"]
    # Steady: a new candidate (its own build) on the same task, whose preparation and baseline the cold pass made.
    assert not steady[0]["gates"]["compile"]["cached"]
    assert steady[0]["candidate"]["path"] not in (cold[0]["candidate"]["path"], fresh[0]["candidate"]["path"])
    assert steady[0]["task"]["path"] == cold[0]["task"]["path"]
    eager = [v["gates"]["perf"]["eager"]["median_ms"] for v in (cold[0], steady[0], fresh[0])]
    assert eager[1] == eager[0]  # The cold pass's baseline, read back (two timings never give the same median).
    # Fresh: a new candidate (its own build) on a new task (a copy, prepared and timed anew) ...
    assert not fresh[0]["gates"]["compile"]["cached"]
    assert fresh[0]["candidate"]["path"] != cold[0]["candidate"]["path"]
    assert "/fresh/tasks/" in fresh[0]["task"]["path"] and fresh[0]["task"]["name"] == cold[0]["task"]["name"]
    assert eager[2] != eager[0]  # Timed anew.
    # The earlier passes' prepared task made room for the new one (two passes' worth once filled a disk).
    tasks = work / "cache" / "tasks"
    assert len([p for p in tasks.glob("1_ReLU-*") if p.is_dir()]) == 1 and len(list(tasks.glob("*.init.json"))) == 1
    # ... while torch's build facts were found once, by the cold pass.
    assert fresh[0]["stage_seconds"]["setup"] < 0.5 < cold[0]["stage_seconds"]["setup"]
    for label in ("| anvil_steady |", "| anvil_fresh |", "| steady |", "| fresh |"):
        assert label in proc.stdout, label
