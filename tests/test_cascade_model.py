"""Cascade data model: events, node specs, the history's incremental per-node state, and the O(N) next-event
sampler against the Hawkes engine's sample_next."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uncertainty_lab.cascade import CascadeError, Event, History, NodeSpec, as_node_specs, has_fast_path, next_event
from uncertainty_lab.hawkes import HawkesModel

SPECS = [NodeSpec("a", "write tersely"), NodeSpec("b", "write loudly"), NodeSpec("c", "write formally")]


def test_event_is_frozen_and_validated():
    e = Event(1, np.int64(2), "x")
    assert (e.time, e.node, e.text) == (1.0, 2, "x") and isinstance(e.time, float) and type(e.node) is int
    with pytest.raises(AttributeError):
        e.time = 3.0
    with pytest.raises(CascadeError, match="node index"):
        Event(0.0, -1, "x")
    with pytest.raises(CascadeError, match="node index"):
        Event(0.0, "local_tv", "x")
    with pytest.raises(CascadeError, match="finite"):
        Event(math.nan, 0, "x")
    with pytest.raises(CascadeError, match="string"):
        Event(0.0, 0, None)
    assert Event.from_record(e.to_record()) == e


def test_node_specs_forms_and_errors():
    specs = as_node_specs({"a": "x", "b": "y"})
    assert specs == (NodeSpec("a", "x"), NodeSpec("b", "y"))
    assert as_node_specs([("a", "x"), {"name": "b", "instruction": "y"}]) == specs
    with pytest.raises(CascadeError, match="distinct"):
        as_node_specs([("a", "x"), ("a", "y")])
    with pytest.raises(CascadeError, match="non-empty"):
        NodeSpec("", "x")


def test_history_bookkeeping_and_errors():
    h = History(SPECS, [Event(0.0, 1, "seed")])
    assert h.latest == [None, 0, None]
    h.append(Event(1.0, 0, "x"))
    h.append(Event(1.0, 2, "y"))  # a tie across nodes is allowed
    assert h.latest == [1, 0, 2] and len(h) == 3 and h[0].text == "seed"
    assert h.times.tolist() == [0.0, 1.0, 1.0] and h.nodes.tolist() == [1, 0, 2]
    assert h.latest_before(1.0) == [None, 0, None]  # strictly before: the tied events do not count
    assert h.latest_before(1.5) == [1, 0, 2]
    assert h.before(1.0) == 1 and h.before(2.0) == 3
    assert h.node_name(2) == "c"
    with pytest.raises(CascadeError, match="time order"):
        h.append(Event(0.5, 0, "late"))
    with pytest.raises(CascadeError, match="out of range"):
        h.append(Event(2.0, 3, "x"))
    with pytest.raises(CascadeError, match="before the last history event"):
        h.excitation(0.5, 1.0)
    with pytest.raises(CascadeError, match="beta"):
        h.excitation(2.0, 0.0)
    with pytest.raises(CascadeError, match="empty"):
        _ = History(SPECS).last_time
    with pytest.raises(CascadeError, match="at least one node"):
        History(0)


def _brute_state(times, nodes, n, t, beta, right=False):
    out = np.zeros(n)
    for tm, nm in zip(times, nodes, strict=True):
        if tm < t or (right and tm == t):
            out[nm] += math.exp(-beta * (t - tm))
    return out


@settings(max_examples=150, deadline=None)
@given(
    n=st.integers(1, 4),
    steps=st.lists(st.tuples(st.sampled_from([0.0, 0.0, 0.3, 1.0]) | st.floats(0, 5), st.integers(0, 3)),
                   min_size=1, max_size=40),
    beta=st.floats(0.05, 3.0),
    extra=st.sampled_from([0.0, 0.0, 1e-3, 0.7, 4.0]),
    lazy_at=st.integers(0, 40),
)
def test_incremental_state_equals_brute_force(n, steps, beta, extra, lazy_at):
    """state_j(t) = Σ_{τ_m < t, n_m = j} e^{-β(t − τ_m)}, kept incrementally, equals the full rescan — whether the
    decay was first asked for before, during or after the appends; ties at the query time excluded (left limit)."""
    h = History(n)
    times = np.cumsum([d for d, _ in steps])
    nodes = [j % n for _, j in steps]
    for m, (t, j) in enumerate(zip(times, nodes, strict=True)):
        if m == lazy_at:
            h.excitation(float(t), beta)  # start tracking this β midway
        h.append(Event(float(t), j, ""))
    q = float(times[-1] + extra)
    for right in (False, True):
        got = h.excitation(q, beta, right=right)
        want = _brute_state(times, nodes, n, q, beta, right=right)
        # a few dozen multiplications by e^{-βΔt}: relative error ~1e-15 per step
        np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-300)
        assert ((got > 0) == (want > 0)).all()  # no cancellation turns a positive state into 0 or back


def _models():
    alpha = [[0.3, 0.5, 0.0], [0.0, 0.2, 0.4], [0.1, 0.0, 0.3]]
    mu = [0.2, 0.1, 0.05]
    return [
        HawkesModel.exponential(mu, alpha, beta=1.5),
        HawkesModel(mu, np.asarray(alpha) * 0.5, "sum_of_exponentials", decays="0.5, 4", weights="0.5, 0.5"),
    ]


@pytest.mark.parametrize("model", _models(), ids=["exponential", "sum_of_exponentials"])
def test_fast_next_event_draws_what_sample_next_draws(model):
    """The O(N) thinning from the history's state consumes the generator as the engine does: same (τ, n) for
    the same seed, step after step, with generated events fed back."""
    assert has_fast_path(model)
    h = History(3, [Event(0.0, 0, "seed")])
    for i in range(200):
        fast = next_event(model, h, np.random.default_rng(i))
        slow = model.sample_next((h.times.copy(), h.nodes.copy()), h.last_time, np.random.default_rng(i))
        assert fast[1] == slow[1]
        # the two compute the same excitation by different float paths: agreement to ~1e-12 relative
        assert fast[0] == pytest.approx(slow[0], rel=1e-12, abs=1e-12)
        h.append(Event(slow[0], slow[1], ""))
    # a horizon before the next event: both say None
    for i in range(20):
        hz = h.last_time + 1e-4
        assert (next_event(model, h, np.random.default_rng(i), horizon=hz) is None) == (
            model.sample_next((h.times.copy(), h.nodes.copy()), h.last_time, np.random.default_rng(i), horizon=hz) is None)


@pytest.mark.parametrize("model", _models(), ids=["exponential", "sum_of_exponentials"])
def test_cascade_draws_with_the_hawkes_sampler(model):
    """The cascade's draw is the Hawkes engine's next_event_from_state on the history's state: the same event
    for the same generator, and the generator left in the same place."""
    from uncertainty_lab.hawkes.simulate import exponential_decays, next_event_from_state

    h = History(3, [Event(0.0, 0, "seed"), Event(0.4, 2, "x"), Event(1.1, 1, "y")])
    for i in range(50):
        a, b = np.random.default_rng(i), np.random.default_rng(i)
        state = np.stack([h.excitation(h.last_time, d, right=True) for d in exponential_decays(model)])
        assert next_event(model, h, a) == next_event_from_state(model, state, h.last_time, b)
        assert a.random() == b.random()
        h.append(Event(*next_event(model, h, np.random.default_rng(1000 + i)), ""))


def test_next_event_falls_back_for_other_kernels_and_dies_out():
    pl = HawkesModel([0.3, 0.2], [[0.1, 0.1], [0.1, 0.1]], "power_law")
    assert not has_fast_path(pl)
    h = History(2, [Event(0.0, 0, "seed"), Event(0.5, 1, "x")])
    got = next_event(pl, h, np.random.default_rng(3))
    assert got == pl.sample_next((h.times.copy(), h.nodes.copy()), 0.5, np.random.default_rng(3))
    dead = HawkesModel.exponential([0.0, 0.0], [[0.0, 0.0], [0.0, 0.0]], beta=1.0)
    assert next_event(dead, h, np.random.default_rng(0)) is None
    with pytest.raises(CascadeError, match="before the last"):
        next_event(pl, h, np.random.default_rng(0), now=0.1)
