#!/usr/bin/env python3
"""The RL acceptance run (issue 36): a scripted 3-turn rollout of 8 tasks x 8 samples through anvil's verl agent loop
(python/tests/verl_agent_loop.py: verl 0.9.1's own agent-loop objects) and its slime rollout
(python/tests/slime_rollout.py: slime's signatures at 624b824a), on the CPU backend, every answer judged by one
`anvil serve`. The answers are drawn (seeded) from a small pool of kernelbench-format candidates per task, so most
verdicts are cache hits; both trainers get the same answers and must give the same rewards. Writes a markdown table
of every trajectory: each turn's verdict and reward, the PrimeEcho score, the tokens the loss sees, GRPO's advantage
and MirrorPop's decision (two samples' training log-probs moved by 0.5 on every other token, δ 0.05).

    python3 bench/scripts/rl_rollout_acceptance.py --out bench/results/rl_rollout_cpu.md
(needs scripts/setup.sh and scripts/verl_venv.sh; ~5 minutes on a warm cache)."""

import argparse
import importlib.util
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SWEEP = ROOT / "tests" / "redteam" / "sweep"
VERL = ROOT / ".venv-verl" / "bin" / "python"
EX = ROOT / "examples" / "candidates"
BONUSES = (0.2, 0.1)
SHIFTED = {"3": 0.5, "42": 0.5}  # MirrorPop: these samples' training log-probs stray from the rollout's


def fenced(path):
    return f"Here is my kernel.\n\n```python\n{Path(path).read_text()}```\n"


NO_CODE = "I would fuse the elementwise ops into one loop and vectorize it."
FAILS = [NO_CODE, EX / "relu" / "compile_error_kb.py", EX / "relu" / "wrong_answer_kb.py"]
TASKS = [  # (name, task file or sweep task, passing pool, failing pool beyond FAILS)
    ("relu", "examples/tasks/relu.py", [EX / "relu" / "pass_kb.py", SWEEP / "py" / "legit_relu_inplace_alias_kb.py"],
     [EX / "relu" / "runtime_error_kb.py", SWEEP / "py" / "st_property_kb.py"]),
    ("linear_relu", "examples/tasks/linear_relu.py",
     [EX / "linear_relu" / "pass_kb.py", SWEEP / "py" / "legit_linear_relu_reused_buffer_kb.py"],
     [SWEEP / "py" / "a4_ns_mkldnn_linear_relu_kb.py"]),
    ("matmul (no pass in its pool)", "examples/tasks/matmul.py", [],
     [SWEEP / "py" / "st_closure_kb.py", SWEEP / "py" / "a4_ns_mkl_linear_kb.py"]),
    ("softmax", "examples/tasks/softmax.py", [SWEEP / "py" / "legit_softmax_rows_kb.py"],
     [SWEEP / "py" / "st_default_arg_kb.py"]),
    ("gelu", "gelu.py", [SWEEP / "legit" / "kb_gelu_at_vec_erf.py", SWEEP / "legit" / "kb_gelu_static_erff_inplace.py"], []),
    ("selu", "l1_27_selu.py", [SWEEP / "legit" / "kb_selu_device_guard.py", SWEEP / "legit" / "kb_selu_outofline_member.py"],
     []),
    ("gemm_add_relu", "l2_76_gemm_add_relu.py",
     [SWEEP / "legit" / "kb_gemm_add_relu_weight_T.py", SWEEP / "legit" / "kb_gemm_add_relu_lazy_build.py"], []),
    ("layernorm", "l1_40_layernorm.py", sorted((SWEEP / "legit").glob("kb_layernorm*.py"))[:2], []),
]


def task_text(where, made):
    if where.startswith("examples/"):
        return (ROOT / where).read_text()
    spec = importlib.util.spec_from_file_location("sweep_run", SWEEP / "run.py")
    run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run)
    return Path(run.task_path(where, str(ROOT.parent / "shared" / "kernelbench"), made)).read_text()


def draw(rng, passing, failing):
    """Three turns' answers: a pass more likely at each later turn, when the pool has one."""
    out = []
    for p in (0.3, 0.5, 0.6):
        pool = passing if passing and rng.random() < p else failing
        pick = rng.choice(pool)
        out.append(pick if isinstance(pick, str) else fenced(pick))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--anvil", default=str(ROOT / "build" / "anvil"))
    ap.add_argument("--cache-dir", default=str(ROOT / "build" / "test-cache"))
    ap.add_argument("--seed", type=int, default=36)
    ap.add_argument("--out")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    made = tempfile.mkdtemp(prefix="anvil-rl-tasks-")
    groups, names, truths, answers, index = [], [], [], [], []
    for g, (name, where, passing, failing) in enumerate(TASKS):
        text = task_text(where, made)
        group = [draw(rng, passing, FAILS + failing) for _ in range(8)]
        groups.append({"task": text, "answers": group})
        for a in group:
            names.append(name)
            truths.append(text)
            answers.append(a)
            index.append(g)

    work = tempfile.mkdtemp(prefix="anvil-rl-serve-")
    serve = subprocess.Popen([args.anvil, "serve", "--port", "0", "--cache-dir", args.cache_dir, "--work-dir", work,
                              "-j", "2", "-q"], stdout=subprocess.PIPE, stderr=open(Path(work) / "serve.err", "w"),
                             text=True)
    url = serve.stdout.readline().split()[-1]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "ANVIL_URL": url, "ANVIL_BACKEND": "cpu",
           "ANVIL_PRIME_ECHO": f"{BONUSES[0]},{BONUSES[1]}", "ANVIL_MIRROR_POP_DELTA": "0.05",
           "ANVIL_BDR_REISSUE_PROB": "1.0"}
    results = {}
    try:
        for trainer, script, spec in (
                ("verl", "verl_agent_loop.py",
                 {"loop": {"anvil_url": url, "backend": "cpu", "max_turns": 3, "bonus_first": BONUSES[0],
                           "bonus_second": BONUSES[1], "max_concurrency": 16},
                  "ground_truths": truths, "samples": answers, "index": index, "train_shift": SHIFTED, "delta": 0.05}),
                ("slime", "slime_rollout.py", {"groups": groups, "train_shift": SHIFTED, "bdr_draws": 8})):
            path = Path(work) / f"{trainer}.json"
            path.write_text(json.dumps(spec))
            start = time.monotonic()
            proc = subprocess.run([str(VERL), str(ROOT / "python" / "tests" / script), str(path)], capture_output=True,
                                  text=True, env=env, timeout=3000)
            if proc.returncode != 0:
                sys.exit(f"{trainer}: {proc.stderr[-3000:]}")
            results[trainer] = json.loads(proc.stdout)
            results[trainer]["seconds"] = time.monotonic() - start
            print(f"{trainer}: {len(answers)} trajectories in {results[trainer]['seconds']:.0f} s", flush=True)
    finally:
        serve.terminate()
        serve.wait(timeout=60)

    v, s = results["verl"], results["slime"]
    rows, same = [], 0
    for k in range(len(answers)):
        vo, so = v["outputs"][k], s["samples"][k]
        statuses = vo["extra_fields"]["anvil_statuses"]
        same += statuses == so["metadata"]["anvil_statuses"] and abs(vo["reward_score"] - so["reward"]) < 1e-9
        rows.append(f"| {names[k]} | {k % 8} | {', '.join(statuses)} | "
                    f"{', '.join(f'{r:g}' for r in vo['extra_fields']['turn_scores'])} | {vo['reward_score']:.4g} | "
                    f"{so['reward']:.4g} | {sum(vo['response_mask'])} / {len(vo['response_mask'])} | "
                    f"{sum(so['loss_mask'])} / {so['response_length']} | {v['advantages'][k]:.3f} | "
                    f"{s['advantages'][k]:.3f} | {'kept' if v['kept'][k] else 'dropped'} | "
                    f"{'kept' if s['kept'][k] else 'dropped'} |")
    passed_turn = {}
    for vo in v["outputs"]:
        st = vo["extra_fields"]["anvil_statuses"]
        key = f"pass at turn {st.index('pass') + 1}" if "pass" in st else "never passed"
        passed_turn[key] = passed_turn.get(key, 0) + 1
    head = [f"# The RL acceptance run: 8 tasks x 8 samples, up to 3 turns, through verl's and slime's rollouts",
            "",
            f"Command: `python3 {Path(__file__).relative_to(ROOT)} --out {args.out}` (seed {args.seed}; the CPU machine, "
            f"2 cores; one `anvil serve -j 2` on the cpu backend judging both runs; PrimeEcho bonuses {BONUSES[0]} / "
            f"{BONUSES[1]}, α 0.75; `train_on: first_turn`; MirrorPop δ 0.05 with samples 3 and 42's training "
            f"log-probs moved by 0.5 on every other token).",
            "",
            f"- verl: {len(answers)} trajectories, {len(v['calls'])} generations, {v['seconds']:.0f} s; slime: "
            f"{len(s['samples'])} trajectories, {len(s['calls'])} generations, {s['seconds']:.0f} s.",
            f"- The two trainers agree on every trajectory's statuses and reward: {same} of {len(answers)}.",
            f"- Outcomes: {', '.join(f'{k} {n}' for k, n in sorted(passed_turn.items()))}.",
            f"- MirrorPop kept {sum(v['kept'])} (verl) / {sum(s['kept'])} (slime) of {len(answers)}; BDR buffered "
            f"{s['bdr_buffered']} all-failed group(s); the next batch of 8 opened with "
            f"{sum(1 for d in s['bdr_drawn'] if d['bdr'])} repair group(s).",
            "",
            "| task | sample | turns (verdicts) | turn rewards | PrimeEcho verl | slime | loss tokens verl | slime | "
            "advantage verl | slime | MirrorPop verl | slime |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    text = "\n".join(head + rows) + "\n"
    print("\n".join(head[4:8]))
    if args.out:
        Path(args.out).write_text(text)


if __name__ == "__main__":
    main()
