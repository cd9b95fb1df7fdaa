"""PrimeEcho (MusaCoder §5): a multi-turn trajectory's reward anchored on its first turn, and the loss mask that puts
the policy gradient on the first response alone."""


def prime_echo(turn_rewards, alpha=0.75, *, bonus_first, bonus_second):
    """alpha * s1 + (1 - alpha) * max(s) + b over the turns' rewards s (turn 1 first), where b is `bonus_first` when
    turn 1 passed (s1 >= 1), `bonus_second` when turn 2 was the first to pass, else 0. None when any turn's reward is
    None (the machine failed on the trajectory: it carries no reward). The paper gives no values for the bonuses,
    so they have no default."""
    turns = list(turn_rewards)
    if not turns:
        raise ValueError("prime_echo needs at least one turn's reward")
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha is a weight in [0, 1], not {alpha}")
    if any(s is None for s in turns):
        return None
    bonus = 0.0
    if turns[0] >= 1.0:
        bonus = bonus_first
    elif len(turns) > 1 and turns[1] >= 1.0:
        bonus = bonus_second
    return alpha * turns[0] + (1.0 - alpha) * max(turns) + bonus


def prime_echo_loss_mask(segments):
    """One 0/1 per token of a trajectory given as segments ("response", n) or ("env", n) in order (the model's
    answers, and what came back between them: feedback, the next request): 1 on the first response's tokens only."""
    mask, seen_response = [], False
    for i, segment in enumerate(segments):
        try:
            kind, n = segment
        except (TypeError, ValueError):
            raise ValueError(f"segment {i} is ({'response'!r} or {'env'!r}, tokens), not {segment!r}") from None
        if kind not in ("response", "env"):
            raise ValueError(f"segment {i} is of kind {kind!r}; the kinds are 'response' and 'env'")
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise ValueError(f"segment {i} has {n!r} tokens; a count is an int >= 0")
        first = kind == "response" and not seen_response
        seen_response = seen_response or kind == "response"
        mask += [1 if first else 0] * n
    return mask
