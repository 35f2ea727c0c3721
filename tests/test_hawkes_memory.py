"""The fit's memory: chunked sums equal brute force, the fit equals the all-features construction it replaced,
candidates do not add up, and the estimate/warning made before a fit starts."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import uncertainty_lab.hawkes.excitation as exc
import uncertainty_lab.hawkes.memory as memory
from uncertainty_lab.hawkes import (
    EventStream,
    ExponentialKernel,
    HawkesModel,
    SumOfExponentialsKernel,
    fit_hawkes,
    simulate,
)
from uncertainty_lab.hawkes.fit import _TargetProblem

G = np.array([[0.25, 0.20, 0.15], [0.15, 0.25, 0.20], [0.20, 0.15, 0.25]])
TRUTH = HawkesModel.exponential([0.10, 0.08, 0.09], 2.0 * G, beta=2.0)  # ρ(G) = 0.6


@pytest.fixture(scope="module")
def large():
    return simulate(TRUTH, T=150_000.0, seed=3, method="branching")  # ≈ 1e5 events


def random_stream(rng, m, n):
    """Random times with ties across nodes (never a node twice at one instant), random nodes."""
    t = np.sort(rng.uniform(0, m / 4, m))
    nodes = rng.integers(0, n, m)
    if n > 1:  # pairs of equal times at different nodes
        t[1::6] = t[0::6][: t[1::6].size]
        nodes[1::6] = (nodes[0::6][: nodes[1::6].size] + 1) % n
    return EventStream(t, nodes, n, float(t[-1]) + 1.0)


def brute_excitation(kernel, t, nodes, n, q, right):
    out = np.zeros((q.size, n))
    for r, s in enumerate(q):
        before = t <= s if right else t < s
        np.add.at(out[r], nodes[before], kernel.value(s - t[before]))
    return out


@pytest.mark.parametrize("kernel", [ExponentialKernel(beta=3.0), SumOfExponentialsKernel(decays=[0.2, 5.0, 40.0])])
def test_chunked_sums_match_brute_force(monkeypatch, kernel):
    # a 5-event chunk forces every state block and chunk boundary, and ties across them
    monkeypatch.setattr(exc, "_BLOCK", 5)
    rng = np.random.default_rng(7)
    for trial in range(6):
        n = 1 + trial % 3
        s = random_stream(rng, 120, n)
        t, nodes = s.times, s.nodes
        q = np.concatenate([rng.uniform(-1, t[-1] + 1, 40), t[::7]])  # unsorted, with exact event times
        for right in (False, True):
            got = exc.excitation(kernel, t, nodes, n, q, right=right)
            assert got == pytest.approx(brute_excitation(kernel, t, nodes, n, q, right), rel=1e-10, abs=1e-14)
        F = brute_excitation(kernel, t, nodes, n, t, False)
        sources = np.arange(n)[::-1][: max(1, n - 1)][::-1]
        for i, X in enumerate(exc.design_matrices(kernel, t, nodes, n, sources)):
            want = np.hstack([np.ones(((nodes == i).sum(), 1)), F[nodes == i][:, sources]])
            assert X == pytest.approx(want, rel=1e-10, abs=1e-14)
        want_c = np.bincount(nodes, weights=kernel.integral(s.end_time - t), minlength=n)
        assert exc.total_integrals(kernel, t, nodes, n, s.end_time) == pytest.approx(want_c, rel=1e-12)
        model = HawkesModel(rng.uniform(0.1, 1, n), rng.uniform(0, 0.5, (n, n)), kernel)
        lam = model.mu[nodes] + np.einsum("mj,jm->m", F, model.alpha[:, nodes])
        want_ll = np.log(lam).sum() - s.duration * model.mu.sum() - want_c @ model.alpha.sum(axis=1)
        assert model.log_likelihood(s) == pytest.approx(want_ll, rel=1e-12)
        dmu, dalpha = model.log_likelihood_gradient(s)
        onehot = np.eye(n)[nodes]
        assert dmu == pytest.approx(onehot.T @ (1 / lam) - s.duration, rel=1e-10, abs=1e-10)
        assert dalpha == pytest.approx((F / lam[:, None]).T @ onehot - want_c[:, None], rel=1e-10, abs=1e-10)


def all_features_fit(stream, beta):
    """The construction the streaming fit replaced: all M × N states and features, then X_i = [1, F[n = i]]."""
    t, nodes, n = stream.times, stream.nodes, stream.n_nodes
    S = exc.exp_states(t, nodes, n, beta)
    p = np.searchsorted(t, t, side="left") - 1
    has, pc = p >= 0, np.maximum(p, 0)
    F = S[pc] * np.where(has, np.exp(-beta * (t - t[pc])), 0.0)[:, None]
    c = np.concatenate([[stream.duration], np.bincount(nodes, weights=(1 - np.exp(-beta * (stream.end_time - t))) / beta,
                                                       minlength=n)])
    mu, alpha = np.zeros(n), np.zeros((n, n))
    for i in range(n):
        X = np.hstack([np.ones(((nodes == i).sum(), 1)), F[nodes == i]])
        prob = _TargetProblem.from_design(X, c, "none", 0.0)
        theta = prob.theta(prob.solve(2000, 1e-8)[0])
        mu[i], alpha[:, i] = theta[0], theta[1:]
    return mu, alpha


def test_fit_equals_the_all_features_construction():
    rng = np.random.default_rng(11)
    for seed in range(3):
        s = simulate(TRUTH, T=float(rng.uniform(2000, 6000)), seed=seed, method="branching")
        fit = fit_hawkes(s, beta=2.0)
        mu, alpha = all_features_fit(s, 2.0)
        assert fit.mu == pytest.approx(mu, rel=1e-10)
        assert fit.alpha == pytest.approx(alpha, rel=1e-10, abs=1e-12)


def test_fit_with_tiny_chunks_equals_the_default(monkeypatch):
    s = simulate(TRUTH, T=3000.0, seed=5, method="branching")
    ref = fit_hawkes(s, beta_grid=[0.5, 2.0, 8.0])
    monkeypatch.setattr(exc, "_BLOCK", 7)
    small = fit_hawkes(s, beta_grid=[0.5, 2.0, 8.0])
    assert small.table.column("loglik") == pytest.approx(ref.table.column("loglik"), rel=1e-12)
    assert small.mu == pytest.approx(ref.mu, rel=1e-10)
    assert small.alpha == pytest.approx(ref.alpha, rel=1e-10, abs=1e-12)


def traced_peak(fn):
    """(peak, still held) bytes of numpy/Python allocations made while fn runs."""
    tracemalloc.start()
    try:
        fn()
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak, held


def test_candidates_do_not_add_up_and_nothing_per_event_is_kept(large):
    one, _ = traced_peak(lambda: fit_hawkes(large, beta=2.0))
    grid, held = traced_peak(lambda: fit_hawkes(large))  # six candidates
    # before: each candidate kept its per-target matrices (≈ 96 bytes per event), so six needed ≈ 6× one
    assert grid < 1.2 * one
    assert held < 2**20  # the result holds no per-event array (one would be ≥ 8 bytes × 1e5 events)


def test_estimate_brackets_the_measured_peak(large):
    peak, _ = traced_peak(lambda: fit_hawkes(large, beta=2.0))
    estimate = memory.fit_memory_estimate(large)
    # the per-event part is a floor of what the fit allocates; the fixed part covers its chunks and the solver
    assert estimate - memory.FIXED_BYTES <= peak <= estimate


def test_a_fit_too_big_for_free_memory_warns_first(monkeypatch, large):
    need = memory.fit_memory_estimate(large)
    assert memory.memory_warning(large, available=4 * need) is None
    text = memory.memory_warning(large, available=need)
    assert "GB of memory" in text and "stream.split" in text and str(large.n_events) in text
    monkeypatch.setattr(memory, "available_memory", lambda: need // 2)
    with pytest.warns(UserWarning, match="fit_hawkes will need about"):
        fit = fit_hawkes(large, beta=2.0)
    assert any("will need about" in w for w in fit.warnings)
    assert "WARNING: fit_hawkes will need" in repr(fit)
