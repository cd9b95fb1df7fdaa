"""`anvil rl score` (C++) and anvil_rl (Python) give the same rewards and PrimeEcho scores on 10,000 random verdicts
and trajectories, under four settings of the reward and PrimeEcho."""

import json
import random
import subprocess

from anvil_rl import prime_echo, reward
from conftest import anvil_bin

STATUSES = ["pass", "wrong_answer", "compile_error", "runtime_error", "timeout", "cheat", "infra_error"]
OUTCOMES = ["no_code", "truncated", "refused", "server_error"]
SETTINGS = [  # (lam, nu_max, vs, alpha, bonus_first, bonus_second)
    (0.5, 4.0, "eager", 0.75, 0.2, 0.1),
    (0.25, 2.0, "compile", 0.5, 0.0, 0.0),
    (1.0, 10.0, "eager", 1.0, 0.3, 0.05),
    (0.1, 0.5, "compile", 0.0, -0.1, 0.4),
]


def random_verdict(rng):
    if rng.random() < 0.15:  # A run's attempt: a model outcome, or a verdict under "verdict".
        outcome = rng.choice(OUTCOMES + STATUSES)
        inner = random_verdict_body(rng, outcome) if outcome in STATUSES else None
        return {"outcome": outcome, "verdict": inner}
    return random_verdict_body(rng, rng.choice(STATUSES + OUTCOMES[:2]))


def random_verdict_body(rng, status):
    v = {"status": status}
    if rng.random() < 0.9:
        v["correctness_rate"] = rng.choice([0.0, 1.0, rng.random(), -rng.random()])
    if rng.random() < 0.8:
        perf = {}
        for key in ("speedup_eager", "speedup_compile"):
            if rng.random() < 0.8:
                perf[key] = rng.choice([0.0, -1.0, rng.uniform(0, 1), rng.uniform(1, 20), rng.randint(1, 30)])
        v["gates"] = {"perf": perf} if rng.random() < 0.95 else {"perf": None}
    return v


def test_cpp_and_python_agree_on_ten_thousand_random_inputs(tmp_path):
    rng = random.Random(20261205)
    compared = trajectories = nones = 0
    worst = 0.0
    for lam, nu_max, vs, alpha, b1, b2 in SETTINGS:
        lines = []
        for i in range(2500):
            if rng.random() < 0.5:
                lines.append({"id": i, **random_verdict(rng)})
            else:
                lines.append({"id": i, "turns": [random_verdict(rng) for _ in range(rng.randint(1, 3))]})
        path = tmp_path / "in.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
        proc = subprocess.run([anvil_bin(), "rl", "score", "--jsonl", str(path), "--lambda", str(lam), "--nu-max",
                               str(nu_max), "--reward-vs", vs, "--alpha", str(alpha), "--bonus-first", str(b1),
                               "--bonus-second", str(b2)], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
        out = [json.loads(line) for line in proc.stdout.splitlines()]
        assert len(out) == len(lines)
        for line, got in zip(lines, out):
            assert got["id"] == line["id"]
            if "turns" in line:
                trajectories += 1
                rewards = [reward(t, lam=lam, nu_max=nu_max, vs=vs) for t in line["turns"]]
                want = prime_echo(rewards, alpha, bonus_first=b1, bonus_second=b2)
                pairs = list(zip(rewards, got["turn_rewards"])) + [(want, got["prime_echo"])]
            else:
                pairs = [(reward(line, lam=lam, nu_max=nu_max, vs=vs), got["reward"])]
            for w, g in pairs:
                compared += 1
                if w is None or g is None:
                    nones += 1
                    assert w is None and g is None, (line, got)
                else:
                    worst = max(worst, abs(w - g))
                    assert abs(w - g) <= 1e-12 * max(1.0, abs(w)), (line, got, w)
    print(f"{len(SETTINGS) * 2500} lines ({trajectories} trajectories), {compared} numbers compared "
          f"({nones} None on both sides); largest difference {worst:g}")
    assert trajectories > 4000 and nones > 500
