"""The reward of one verdict: MusaCoder's eq. 2, as src/verify/reward.cc computes it (docs/verdict.md, "Status")."""

import math

# Verdict statuses (docs/verdict.md) and the model loop's outcomes (docs/run-db.md, attempt.outcome).
FAILED = frozenset({"compile_error", "runtime_error", "timeout", "cheat", "no_code", "truncated", "refused"})
MACHINE = frozenset({"infra_error", "server_error"})
STATUSES = FAILED | MACHINE | {"pass", "wrong_answer"}


def outcome_of(verdict):
    """(status, verdict) of a verdict dict, of a run database's attempt (`outcome` and `verdict`, anvil_runs), or of
    `{"outcome": "no_code"}`; ValueError for anything else."""
    if not isinstance(verdict, dict):
        raise TypeError(f"a verdict is a dict (the verdict JSON or a run's attempt), not {type(verdict).__name__}")
    if "status" in verdict:
        status, body = verdict["status"], verdict
    elif "outcome" in verdict:
        status, body = verdict["outcome"], verdict.get("verdict")
        body = body if isinstance(body, dict) else {}
    else:
        raise ValueError("a verdict needs `status` (the verdict JSON) or `outcome` (a run's attempt); "
                         f"this one has {sorted(verdict)}")
    if status not in STATUSES:
        raise ValueError(f"unknown verdict status {status!r} (known: {', '.join(sorted(STATUSES))})")
    return status, body


def _number(value):
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) else None


def reward(verdict, lam=0.5, nu_max=4.0, vs="eager"):
    """-1 for a failure (compile, run, timeout, cheat; the model's no_code, truncated, refused); -0.5 + 0.5q for a
    wrong answer right on a fraction q > 0 of its trials (-1 at q = 0); 1 + lam * min(max(nu - 1, 0), nu_max) for a
    pass with speedup nu against eager (vs="eager") or torch.compile (vs="compile"), nu = 1 when the verdict has none
    (perf off); None for the machine's failures (infra_error, server_error)."""
    if vs not in ("eager", "compile"):
        raise ValueError(f"vs is 'eager' or 'compile', not {vs!r}")
    status, body = outcome_of(verdict)
    if status in MACHINE:
        return None
    if status == "pass":
        gates = body.get("gates")
        perf = gates.get("perf") if isinstance(gates, dict) else None
        perf = perf if isinstance(perf, dict) else {}
        nu = _number(perf.get("speedup_" + vs))
        if nu is None or nu <= 0:
            nu = 1.0  # Speedup unknown: no bonus, no penalty.
        return 1.0 + lam * min(max(nu - 1.0, 0.0), nu_max)
    if status == "wrong_answer":
        q = _number(body.get("correctness_rate")) or 0.0
        return -0.5 + 0.5 * q if q > 0 else -1.0
    return -1.0
