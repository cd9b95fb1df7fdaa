"""The trivial-output guard's decisions on small references, without the task worker."""

import torch

from anvil_py import trivial_guard

TOL = {"float32": [1e-4, 1e-4]}


def run(forward, make, seeds=4):
    """Trials from seeds 0..seeds-1 through `forward`; then the guard's more sets. Returns (guard, degenerate,
    labels of the guard sets)."""
    inputs0 = None
    guards = []
    for k in range(seeds):
        inputs = make(k)
        outputs = [forward(*inputs)]
        if k == 0:
            guards = trivial_guard.guards_for(outputs, TOL, True)
            inputs0 = inputs
        for g in guards:
            g.observe_trial(outputs[g.index], inputs)
    degenerate, sets = trivial_guard.judge_more_sets(guards, lambda ins: forward(*ins), make, inputs0,
                                                      list(range(100, 108)), lambda out: [out])
    return guards[0], degenerate, [label for label, *_ in sets]


def randn(scale, *shape):
    return lambda seed: [scale * torch.randn(*shape, generator=torch.Generator().manual_seed(seed))]


def test_an_ordinary_output_is_left_alone():
    g, degenerate, sets = run(torch.relu, randn(1.0, 16, 64))
    assert not g.tightened() and g.still_passing() == [] and degenerate == "" and sets == []


def test_tiny_outputs_get_an_atol_scaled_to_their_magnitude():
    g, degenerate, sets = run(lambda x: torch.softmax(x, dim=1), randn(0.1, 4, 20000))
    assert g.base["zeros"] and g.base["a constant"] and not g.base["an input"]
    assert g.tightened() and abs(g.scale - 5e-5) < 1e-5
    assert g.still_passing() == [] and degenerate == "" and sets == []


def test_a_form_that_only_fails_elsewhere_gets_a_guard_set():
    g, degenerate, sets = run(lambda x: x + 1e-3 * x ** 3, randn(0.05, 16, 256))
    assert g.still_passing() == ["an input"]
    assert degenerate == "" and sets == ["inputs x1e3"]


def test_an_output_that_never_depends_on_the_input_is_degenerate():
    g, degenerate, _ = run(lambda x: x * 0, randn(1.0, 8, 32))
    assert degenerate == "out0: zeros"
    g, degenerate, _ = run(lambda x: torch.softmax(x, dim=1).sum(dim=1), randn(1.0, 8, 32))
    assert degenerate == "out0: a constant"  # Every row sums to 1, whatever the inputs.


def test_nan_handling_follows_the_policy():
    e = torch.tensor([float("nan"), 1.0])
    assert trivial_guard._allclose(e, e.clone(), 1e-4, 1e-4, True)
    assert not trivial_guard._allclose(e, e.clone(), 1e-4, 1e-4, False)
    assert not trivial_guard._allclose(e, torch.zeros(3), 1e-4, 1e-4, True)  # Another shape never passes.


class CenteredMean(torch.nn.Module):
    """(x - mean(x)).mean(): 0 in exact arithmetic, float32 rounding noise near 1e-9 in practice (as level2/23)."""

    def forward(self, x):
        return (x - x.mean(dim=1, keepdim=True)).mean(dim=1)


def test_rounding_noise_around_a_trivial_value_is_found_by_the_float64_reference():
    model = CenteredMean()
    g, _, _ = run(model, randn(1.0, 8, 4096))
    assert g.tightened()  # Zeros are within 1e-4 of noise; scaled to the noise, they are not...
    assert not g.base["an input"]
    noisy = trivial_guard.noise([g], model, randn(1.0, 8, 4096)(0), lambda out: [out])
    assert noisy == [g]  # ...but float64 is not within that of float32 either: no kernel could be judged.
    honest = torch.nn.Softmax(dim=1)
    s, _, _ = run(honest, randn(0.1, 4, 20000))
    assert s.tightened() and trivial_guard.noise([s], honest, randn(0.1, 4, 20000)(0), lambda out: [out]) == []


def test_the_comparison_in_slabs_agrees_with_the_whole():
    e = torch.randn(64, 8, dtype=torch.float32)
    late = e.clone()
    late[60, 3] += 1.0  # Wrong only in the last slab.
    nan = e.clone()
    nan[10, 0] = float("nan")
    for actual, tight in ((e.clone(), True), (late, False), (nan, False), (torch.zeros(()).expand_as(e), False)):
        whole = trivial_guard._allclose(e, actual, 1e-4, 1e-4, True, chunk=1 << 30)
        assert trivial_guard._allclose(e, actual, 1e-4, 1e-4, True, chunk=16) == whole == tight
    assert trivial_guard._allclose(torch.zeros(64, 8), torch.zeros(()).expand(64, 8), 0.0, 0.0, True, chunk=16)
