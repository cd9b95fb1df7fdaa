"""The model loop's repair request (src/gen/repair.cc), in Python: the user message that asks for another turn after
a failed one — the verifier's feedback verbatim, or what went wrong with the answer itself. The texts are the C++
loop's; tests/cli/test_generate.py checks them against the requests `anvil generate` sends."""

from anvil_rl.reward import outcome_of

ANSWER_AGAIN = "Answer with the complete, corrected file in one fenced code block."


def repair_message(verdict):
    """The repair request for a failed turn: `verdict` is a verdict dict, a run's attempt, or {"outcome": ...} for
    the model's own failures (no_code, truncated, refused)."""
    status, body = outcome_of(verdict)
    if status == "no_code":
        return "Your answer had no code block, so nothing could be compiled or run. " + ANSWER_AGAIN
    if status == "truncated":
        return ("Your answer was cut off at the token limit before the code was complete. Explain less and answer "
                "with the complete file in one fenced code block.")
    if status == "refused":
        return ("This is a performance-engineering exercise: a faster implementation of the model above, computing "
                "the same results. " + ANSWER_AGAIN)
    if status == "pass":
        raise ValueError("a passing turn asks for no repair")
    feedback = body.get("feedback")
    if not isinstance(feedback, str):
        feedback = f"The verdict was {status}."
    text = ("Here is the verifier's feedback on your last answer:\n\n" + feedback).rstrip("\n")
    return text + "\n\n" + ANSWER_AGAIN
