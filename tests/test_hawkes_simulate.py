"""Simulation: thinning and branching agree with each other and with the stationary rates; sample_next
draws from the exact conditional law; unstable models are refused."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from uncertainty_lab.hawkes import (
    EventStream,
    HawkesError,
    HawkesModel,
    PowerLawKernel,
    SumOfExponentialsKernel,
    UnstableModelError,
    simulate,
)
from uncertainty_lab.hawkes.simulate import exponential_decays, next_event_from_state

MODEL = HawkesModel.exponential([0.3, 0.2, 0.25], [[0.8, 0.6, 0.0], [0.2, 0.6, 0.6], [0.6, 0.0, 0.6]], beta=2.0)


def assert_rates_agree(stream, model, n_se=4.0):
    """Per-node counts within n_se standard errors of T·Λ, with Var N_i(T) ≈ T·[(I−Gᵀ)⁻¹diag(Λ)(I−G)⁻¹]_ii."""
    T = stream.end_time
    expected = T * model.stationary_rates()
    se = np.sqrt(T * np.diag(model.asymptotic_count_covariance()))
    z = (stream.counts - expected) / se
    assert np.all(np.abs(z) < n_se), z  # 4 SE: a correct simulator fails this ~2e-4 of the time per node


def replicate_statistics(model, method, seed, runs=300, T=30.0, k=10):
    """From independent runs on [0, T]: the event count, the k-th event time and the gap after it.

    Independent replicates, because the gaps *within* one run are dependent (clusters), which makes a KS
    test on pooled gaps reject far more often than its level even for two correct simulators."""
    rng = np.random.default_rng(seed)
    counts, kth, gap = [], [], []
    for _ in range(runs):
        s = simulate(model, T=T, seed=rng, method=method)
        counts.append(s.n_events)
        if s.n_events > k:
            kth.append(s.times[k - 1])
            gap.append(s.times[k] - s.times[k - 1])
    return np.array(counts), np.array(kth), np.array(gap)


@pytest.mark.parametrize("method", ["thinning", "branching"])
def test_long_runs_match_the_stationary_rates(method):
    stream = simulate(MODEL, T=6000.0, seed=21, method=method)
    assert stream.n_events > 8000
    assert_rates_agree(stream, MODEL)


@pytest.mark.parametrize(
    "model",
    [
        MODEL,
        HawkesModel([0.5, 0.3], [[0.5, 0.2], [0.3, 0.4]], SumOfExponentialsKernel(decays="0.5, 5")),
        HawkesModel([0.5, 0.3], [[0.3, 0.2], [0.1, 0.3]], PowerLawKernel(c=0.5, theta=1.5)),
    ],
    ids=["exponential", "sum_of_exponentials", "power_law"],
)
def test_thinning_and_branching_agree_in_distribution(model):
    T = 3000.0 if model.kernel.name != "power_law" else 1200.0  # thinning is O(M²) for the power law
    for method, seed in (("thinning", 1), ("branching", 2)):
        assert_rates_agree(simulate(model, T=T, seed=seed, method=method), model)
    thin = replicate_statistics(model, "thinning", seed=3)
    branch = replicate_statistics(model, "branching", seed=4)
    # same law of the count N(30), the 10th event time and the gap after it; i.i.d. samples, so the KS
    # p-value is valid (checked uniform over 15 seed pairs per kernel) and p > 0.01 fails a correct pair 1 %
    for a, b in zip(thin, branch, strict=True):
        assert a.size > 200 and b.size > 200
        assert stats.ks_2samp(a, b).pvalue > 0.01


def test_same_seed_same_stream_and_generators_work():
    a = simulate(MODEL, T=200.0, seed=5)
    assert a == simulate(MODEL, T=200.0, seed=5)
    assert a != simulate(MODEL, T=200.0, seed=6)
    assert simulate(MODEL, T=200.0, seed=np.random.default_rng(5)) == a
    b = simulate(MODEL, T=200.0, seed=5, method="branching")
    assert b == simulate(MODEL, T=200.0, seed=5, method="branching")
    assert isinstance(a, EventStream) and a.end_time == 200.0


def test_max_events_caps_the_run():
    s = simulate(MODEL, T=1e6, max_events=50, seed=3)
    assert s.n_events == 50 and s.end_time == s.times[-1]
    b = simulate(MODEL, T=1e6, max_events=50, seed=3, method="branching")
    assert b.n_events == 50 and b.end_time == b.times[-1]
    no_t = simulate(MODEL, max_events=20, seed=3)
    assert no_t.n_events == 20


def test_sample_next_is_simulates_first_step():
    # with the same seed, one thinning step from an empty history is exactly simulate's first event
    for seed in range(20):
        first = simulate(MODEL, max_events=1, seed=seed)
        assert MODEL.sample_next(None, 0.0, seed) == (first.times[0], first.nodes[0])


def test_sample_next_draws_from_the_exact_conditional_law():
    history = simulate(MODEL, T=30.0, seed=9)
    now = history.end_time
    rng = np.random.default_rng(4)
    draws = [MODEL.sample_next(history, now, rng) for _ in range(1500)]
    times = np.array([t for t, _ in draws])
    nodes = np.array([n for _, n in draws])
    assert np.all(times > now)
    # P(next ≤ t) = 1 − exp(−Σ_i (Λ_i(t) − Λ_i(now))): the probability integral transform must be uniform
    delta = (MODEL.compensator(times, history) - MODEL.compensator(now, history)).sum(axis=1)
    assert stats.kstest(-np.expm1(-delta), "uniform").pvalue > 0.01  # fixed seed; a correct sampler fails 1 %
    # given the time, the node is i with probability λ_i(t) / Σ λ(t): compare counts with summed probabilities
    lam = MODEL.intensity(times, history)
    p = lam / lam.sum(axis=1, keepdims=True)
    for i in range(3):
        sd = np.sqrt(np.sum(p[:, i] * (1 - p[:, i])))
        assert abs(np.sum(nodes == i) - p[:, i].sum()) < 4 * sd


def test_sample_next_edges():
    assert MODEL.sample_next(None, 0.0, 1, horizon=1e-9) is None  # nothing before the horizon
    dead = HawkesModel.exponential([0.0, 0.0], [[0.0, 0.0], [0.0, 0.0]], beta=1.0)
    assert dead.sample_next(EventStream([1.0], [0], 2, 1.0), rng=0) is None  # no intensity, no next event
    t, n = MODEL.sample_next(([0.5, 1.0], [0, 2]), rng=0)  # a (times, nodes) pair; now = last event
    assert t > 1.0 and n in (0, 1, 2)
    with pytest.raises(HawkesError, match="pass now >= the last event time"):
        MODEL.sample_next(([0.5, 1.0], [0, 2]), now=0.7, rng=0)
    with pytest.raises(HawkesError, match="rng must be a non-negative integer or a numpy Generator"):
        MODEL.sample_next(None, 0.0, rng="abc")


def _state(stream, now, decays):
    """state[k, j] = Σ_{τ_l ≤ now, n_l = j} e^{-β_k (now − τ_l)}, summed directly."""
    w = np.exp(-np.outer(decays, now - stream.times))
    return np.stack([np.bincount(stream.nodes, weights=row, minlength=stream.n_nodes) for row in w])


@pytest.mark.parametrize("model", [MODEL, HawkesModel([0.5, 0.3], [[0.3, 0.2], [0.1, 0.3]],
                                                      SumOfExponentialsKernel(decays="0.5, 5"))])
def test_next_event_from_state_draws_what_sample_next_draws(model):
    """From the per-node state the sampler draws the event sample_next draws from the events, for the same
    generator, and leaves the generator where sample_next leaves it (one batch of draws)."""
    history = simulate(model, T=30.0, seed=3)
    decays = exponential_decays(model)
    for k in range(30):
        now = history.end_time + 0.1 * k
        a, b = np.random.default_rng(k), np.random.default_rng(k)
        got = next_event_from_state(model, _state(history, now, decays), now, a)
        want = model.sample_next(history, now, b)
        assert got[1] == want[1] and got[0] == pytest.approx(want[0], rel=1e-12)
        assert a.random() == b.random()
    state = _state(history, history.end_time, decays)
    assert next_event_from_state(model, state, history.end_time, 0, horizon=history.end_time + 1e-9) is None


def test_next_event_from_state_errors():
    assert exponential_decays(HawkesModel([0.5], [[0.5]], PowerLawKernel(c=0.5, theta=1.5))) is None
    with pytest.raises(HawkesError, match="sum-of-exponentials kernel.*use next_event"):
        next_event_from_state(HawkesModel([0.5], [[0.5]], PowerLawKernel(c=0.5, theta=1.5)), [[0.0]], 0.0, 0)
    with pytest.raises(HawkesError, match=r"shape \(1, 3\), got \(3,\)"):
        next_event_from_state(MODEL, np.zeros(3), 0.0, 0)


def test_unstable_models_are_refused_unless_capped():
    unstable = HawkesModel.exponential([0.5], [[1.5]], beta=1.0)
    with pytest.raises(UnstableModelError, match="ρ\\(G\\) = 1.5 >= 1.*allow_unstable=True.*max_events"):
        simulate(unstable, T=100.0, seed=0)
    with pytest.raises(UnstableModelError, match="needs a bound"):
        simulate(unstable, T=100.0, seed=0, allow_unstable=True)
    for method in ("thinning", "branching"):
        s = simulate(unstable, T=100.0, max_events=500, seed=0, allow_unstable=True, method=method)
        assert s.n_events == 500


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({}, "give a horizon T"),
        ({"T": -1.0}, "T must be a finite time > 0"),
        ({"T": 10.0, "method": "ogata"}, "method must be 'thinning' or 'branching'"),
        ({"max_events": 5, "method": "branching"}, "needs a horizon T"),
        ({"T": 10.0, "max_events": -1}, "max_events must be an integer >= 0"),
    ],
)
def test_bad_simulation_arguments(kwargs, words):
    with pytest.raises(HawkesError, match=words):
        simulate(MODEL, **kwargs)


def test_thinning_needs_a_decreasing_kernel():
    class Bump:
        """A rising-then-falling shape: the current intensity is no bound for the future."""

        def value(self, u, alpha=1.0):
            u = np.asarray(u, dtype=float)
            return np.asarray(alpha) * np.where(u >= 0, u * np.exp(-np.clip(u, 0, None)), 0.0)

        def integral(self, u, alpha=1.0):
            u = np.clip(np.asarray(u, dtype=float), 0, None)
            return np.asarray(alpha) * (1 - (1 + u) * np.exp(-u))

        def l1_norm(self, alpha=1.0):
            return alpha

    model = HawkesModel([0.5], [[0.5]], Bump())
    with pytest.raises(HawkesError, match="method='branching'"):
        simulate(model, T=10.0, seed=0)
    s = simulate(model, T=2000.0, seed=0, method="branching")  # numeric inverse-CDF delays
    assert_rates_agree(s, model)


@pytest.mark.parametrize("n_nodes", [1, 3, 12])
def test_scalar_thinning_is_the_numpy_thinning(monkeypatch, n_nodes):
    """Thinning with one decay runs on Python floats for speed; forcing the numpy path must give the same
    events from the same draws (times up to summation order: 1e-9 relative), from an empty history, after a
    history (sample_next) and under max_events."""
    import sys

    module = sys.modules["uncertainty_lab.hawkes.simulate"]
    rng = np.random.default_rng(n_nodes)
    alpha = rng.uniform(0.0, 1.0, (n_nodes, n_nodes)) * (rng.random((n_nodes, n_nodes)) < 0.6)
    alpha *= 0.7 * 2.0 / max(np.max(np.abs(np.linalg.eigvals(alpha))), 1e-9)  # ρ(α/β) = 0.7 at β = 2
    model = HawkesModel.exponential(rng.uniform(0.1, 0.5, n_nodes), alpha, beta=2.0)
    history = simulate(model, T=20.0, seed=1)

    def run():
        return (simulate(model, T=200.0, seed=5), simulate(model, max_events=50, seed=6),
                [model.sample_next(history, 20.0 + k, 100 + k) for k in range(20)])

    scalar = run()
    monkeypatch.setattr(module, "_SCALAR_NODES", 0)
    vector = run()
    for a, b in zip(scalar[:2], vector[:2], strict=True):
        assert a.n_events == b.n_events > 0 and np.array_equal(a.nodes, b.nodes)
        np.testing.assert_allclose(a.times, b.times, rtol=1e-9)
    assert [n for _, n in scalar[2]] == [n for _, n in vector[2]]
    np.testing.assert_allclose([t for t, _ in scalar[2]], [t for t, _ in vector[2]], rtol=1e-9)
