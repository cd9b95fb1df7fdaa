"""The trivial-output guard (policy musacoder; docs/rules.md, "Outputs that say nothing"), run by the task worker
while it prepares a task, on the trusted side.

A trivial output is one a kernel can write without computing: zeros, one constant (trial 0's mean), one row of
trial 0's output broadcast to every row, or one of the inputs as it came. For each floating output the guard asks
whether the tolerance the verdict will use accepts a trivial form on every trial. If one does, the output's check
is tightened: its atol is scaled by the output's magnitude (trial 0's root mean square, when under 1), the form
checked again, and the tightened check must hold between the reference and the same model run in float64 on trial
0's inputs (an honest kernel differs from the reference about as much): where it does not, the output is rounding
noise around a trivial value (level2/23's mean of a group norm, near 1e-8), and the task is degenerate. A form that
still passes every trial is tried on more inputs: trial 0's inputs negated, the task's
inputs from 8 more secret seeds, and trial 0's inputs scaled by 1e-3 and by 1e3. The first set on which it fails
becomes a held-out set of the task (a kernelbench-format candidate must be right on it too); where it passes on
all, the task is degenerate: it cannot tell a kernel from a trivial output, and its spec says so.
"""

import torch

from anvil_py import tensor_io

EXTRA_SEEDS = 8
FORMS = ("zeros", "a constant", "one row broadcast", "an input")
# Elements compared at once: the comparison's float64 temporaries stay near 1 GiB however large the output (a
# multi-GB output compared whole needed several times its size: 68 GB were not enough on an 80 GB H100).
CHUNK_ELEMENTS = 1 << 25


def _allclose_part(e, a, atol, rtol, nan_equal):
    e = e.double()
    a = a.to(e.device).double()
    finite = torch.isfinite(e) & torch.isfinite(a)
    close = (a - e).abs() <= atol + rtol * e.abs()
    same = (e == a) | (torch.isnan(e) & torch.isnan(a) & nan_equal)
    return bool(torch.where(finite, close, same).all())


def _allclose(expected, actual, atol, rtol, nan_equal, chunk=CHUNK_ELEMENTS):
    """anvil's comparison (src/verify/compare.cc): finite pairs within atol + rtol*|expected|, other values equal.
    Compared a slab of the first dimension at a time (about `chunk` elements; views, also of an expanded form), the
    first failing slab ending it."""
    if actual is None or actual.shape != expected.shape:
        return False
    if expected.dim() == 0 or expected.shape[0] <= 1 or expected.numel() <= chunk:
        return _allclose_part(expected, actual, atol, rtol, nan_equal)
    rows = max(1, chunk // max(1, expected[0].numel()))
    return all(_allclose_part(expected[i:i + rows], actual[i:i + rows], atol, rtol, nan_equal)
               for i in range(0, expected.shape[0], rows))


def _finite_moments(t, chunk=CHUNK_ELEMENTS):
    """(count, sum, sum of squares) of the finite elements of `t`, in float64, a chunk at a time."""
    flat = t.reshape(-1)
    count, total, squares = 0, 0.0, 0.0
    for i in range(0, flat.numel(), chunk):
        part = flat[i:i + chunk]
        part = part[torch.isfinite(part)].double()
        count += part.numel()
        total += float(part.sum())
        squares += float(part.pow(2).sum())
    return count, total, squares


class OutputGuard:
    """One floating output: the trivial forms and, per form, whether it has passed every set so far."""

    def __init__(self, index, trial0_output, tolerance, nan_equal):
        self.index = index
        self.name = f"out{index}"
        self.atol, self.rtol = tolerance
        self.nan_equal = nan_equal
        out = trial0_output.detach()
        count, total, squares = _finite_moments(out)
        self.constant = total / count if count else 0.0
        self.trial0 = out
        self.rms = (squares / count) ** 0.5 if count else 0.0
        self.scale = min(1.0, self.rms)
        # Per form: passed every trial so far, at the base tolerance and at the tightened one.
        self.base = {form: True for form in FORMS}
        self.tight = {form: True for form in FORMS}

    def forms(self, expected, inputs):
        """form -> the output it would write for this set (None where the form does not apply)."""
        same = [x for x in inputs if isinstance(x, torch.Tensor) and x.shape == expected.shape and
                x.dtype.is_floating_point]
        t0 = self.trial0
        row = t0[0:1].to(expected.device).expand_as(expected) if t0.dim() >= 2 and t0.shape[0] > 1 and \
            t0.shape[1:] == expected.shape[1:] else None
        # Zeros and the constant as one element expanded: no output-sized copy of them.
        zero = torch.zeros((), dtype=expected.dtype, device=expected.device)
        constant = torch.full((), self.constant, dtype=expected.dtype, device=expected.device)
        return {"zeros": zero.expand_as(expected), "a constant": constant.expand_as(expected),
                "one row broadcast": row, "an input": same[0] if same else None}

    def passes(self, form_output, expected, tight):
        atol = self.atol * self.scale if tight else self.atol
        return _allclose(expected, form_output, atol, self.rtol, self.nan_equal)

    def observe_trial(self, expected, inputs):
        for form, written in self.forms(expected, inputs).items():
            self.base[form] = self.base[form] and self.passes(written, expected, tight=False)
            self.tight[form] = self.tight[form] and self.passes(written, expected, tight=True)

    def tightened(self):
        return any(self.base.values())

    def still_passing(self):
        return [form for form in FORMS if self.tight[form]]


def noise(guards, model, trial0_inputs, outputs_of):
    """The tightened guards whose check the reference fails against itself in float64 on trial 0's inputs: their
    outputs are rounding noise, which no honest kernel reproduces. [] when the model cannot run in float64."""
    tightened = [g for g in guards if g.tightened() and g.scale < 1.0]
    if not tightened:
        return []
    try:
        import copy
        model64 = copy.deepcopy(model).double()
        inputs64 = [x.double() if isinstance(x, torch.Tensor) and x.dtype.is_floating_point else x
                    for x in trial0_inputs]
        with torch.no_grad():
            outputs64 = outputs_of(model64(*inputs64))
    except Exception:  # noqa: BLE001 - a model float64 cannot run: no evidence either way
        return []
    noisy = []
    for g in tightened:
        exact = outputs64[g.index] if g.index < len(outputs64) else None
        if isinstance(exact, torch.Tensor) and not g.passes(exact.to(g.trial0.dtype), g.trial0, tight=True):
            noisy.append(g)
    return noisy


def guards_for(outputs, tolerances, nan_equal):
    """An OutputGuard per floating tensor output of trial 0; `tolerances`: dtype name -> [atol, rtol]."""
    guards = []
    for i, out in enumerate(outputs):
        if isinstance(out, torch.Tensor) and out.dtype.is_floating_point and out.numel() > 0:
            tol = tolerances.get(tensor_io.dtype_name(out.dtype))
            if tol:
                guards.append(OutputGuard(i, out, tol, nan_equal))
    return guards


TRANSFORMS = {"negated": -1.0, "x1e-3": 1e-3, "x1e3": 1e3}


def transformed(inputs, how):
    """The floating tensors of `inputs` times TRANSFORMS[how] (a guard set's recipe), the rest as they are."""
    factor = TRANSFORMS[how]
    return [x * factor if isinstance(x, torch.Tensor) and x.dtype.is_floating_point else x for x in inputs]


def more_sets(make_inputs, trial0_inputs, seeds):
    """(label, inputs, recipe) of the sets a form that passes every trial is tried on, mildest first. A recipe says
    how the set is made again (task_worker.held_out_set): trial 0's inputs transformed (its seed is the
    caller's to add), or another seed's."""
    yield "inputs negated", transformed(trial0_inputs, "negated"), {"transform": "negated"}
    for k, seed in enumerate(seeds[:EXTRA_SEEDS]):
        yield f"inputs from another seed ({k})", make_inputs(seed), {"seed": seed}
    yield "inputs x1e-3", transformed(trial0_inputs, "x1e-3"), {"transform": "x1e-3"}
    yield "inputs x1e3", transformed(trial0_inputs, "x1e3"), {"transform": "x1e3"}


def judge_more_sets(guards, run_model, make_inputs, trial0_inputs, seeds, outputs_of):
    """For the guards with forms still passing: tries them on more sets. Returns (degenerate, guard_sets): the
    first guard's form that passed everywhere ("out0: zeros", or ""), and the sets (label, inputs, outputs, recipe),
    each the first on which some still-passing form failed while the reference was finite (at most one per form)."""
    pending = {g.index: set(g.still_passing()) for g in guards if g.still_passing()}
    if not pending:
        return "", []
    by_index = {g.index: g for g in guards}
    survivors = {i: set(forms) for i, forms in pending.items()}
    guard_sets = []
    for label, inputs, recipe in more_sets(make_inputs, trial0_inputs, seeds):
        try:
            outputs = outputs_of(run_model(inputs))
        except Exception:  # noqa: BLE001 - a set the reference cannot take says nothing either way
            continue
        catches = False
        for i, forms in survivors.items():
            expected = outputs[i] if i < len(outputs) else None
            if not isinstance(expected, torch.Tensor):
                continue
            if not bool(torch.isfinite(expected).all()):
                continue
            written = by_index[i].forms(expected, inputs)
            for form in list(forms):
                if not by_index[i].passes(written[form], expected, tight=True):
                    forms.discard(form)
                    catches = True
        if catches:
            guard_sets.append((label, inputs, outputs, recipe))
    for i in sorted(survivors):
        if survivors[i]:
            form = next(f for f in FORMS if f in survivors[i])
            return f"{by_index[i].name}: {form}", guard_sets
    return "", guard_sets
