"""The L1-penalised Hawkes fit has exact zeros where its optimum does, and eta="bic" chooses η on the training events:
checked against the closed-form threshold of a one-node process, the KKT conditions with the model's own gradient
(code independent of the fit's objective), and the path's BIC recomputed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from uncertainty_lab.cascade.config import CascadeConfig
from uncertainty_lab.contracts.memory import CascadeError
from uncertainty_lab.hawkes import EventStream, HawkesError, HawkesModel, fit_hawkes, simulate
from uncertainty_lab.hawkes.kernels import ExponentialKernel
from uncertainty_lab.hawkes.l1_path import eta_max, support_log_likelihood

BETA = 2.0


@pytest.fixture(scope="module")
def one_node():
    return simulate(HawkesModel.exponential([0.5], [[0.8]], beta=BETA), T=300.0, seed=4, method="branching")


def _threshold(stream: EventStream) -> float:
    """η* = (T/M) Σ_m E(τ_m) − C for one node, by direct double sums: with α = 0 the MLE of μ is M/T, and α = 0
    stays optimal (KKT: ∂/∂α (ℓ − ηα) = Σ_m E(τ_m)/μ − C − η ≤ 0) exactly when η ≥ η*."""
    t, T = stream.times, stream.end_time
    E = np.array([np.exp(-BETA * (t[m] - t[:m])).sum() for m in range(t.size)])
    C = np.sum(1.0 - np.exp(-BETA * (T - t))) / BETA
    return float(stream.duration / t.size * E.sum() - C)


def test_one_node_alpha_is_exactly_zero_from_the_closed_form_threshold_on(one_node):
    star = _threshold(one_node)
    assert star > 0 and eta_max(one_node, [ExponentialKernel(beta=BETA)]) == pytest.approx(star, rel=1e-9)
    for eta in (star, 1.01 * star, 3 * star):  # at η* itself the KKT condition holds with equality
        fit = fit_hawkes(one_node, beta=BETA, penalty="l1", eta=eta)
        assert fit.alpha[0, 0] == 0.0 and fit.mu[0] == pytest.approx(one_node.n_events / one_node.duration)
    below = fit_hawkes(one_node, beta=BETA, penalty="l1", eta=0.99 * star)
    assert below.alpha[0, 0] > 0


def test_at_eta_max_every_alpha_is_exactly_zero_where_the_solver_alone_leaves_a_hair():
    """Three independent Poisson nodes at η = η_max (the KKT condition at 0 holds with equality for one α): L-BFGS-B
    alone stops at α ≈ 2e-16 for this seed; the active-set step puts it at 0. Just below η_max that α is positive."""
    stream = simulate(HawkesModel.exponential([0.5, 0.5, 0.5], np.zeros((3, 3)), beta=1.0), T=300.0, seed=3,
                      method="branching")
    top = eta_max(stream, [ExponentialKernel(beta=1.0)])
    assert not np.any(fit_hawkes(stream, beta=1.0, penalty="l1", eta=top).alpha)
    assert np.count_nonzero(fit_hawkes(stream, beta=1.0, penalty="l1", eta=0.98 * top).alpha) >= 1


def test_l1_optimum_satisfies_kkt_with_the_model_s_own_gradient():
    """∂ℓ/∂α_{j,i} = η where α̂ > 0 and ≤ η where α̂ = 0 (and ∂ℓ/∂μ = 0): the certificate of the convex optimum,
    from HawkesModel.log_likelihood_gradient (not the fit's objective). Tolerance 1e-5 of the event count."""
    truth = HawkesModel.exponential([0.3, 0.2, 0.4], [[0.6, 0.5, 0.0], [0.0, 0.4, 0.0], [0.0, 0.0, 0.0]], beta=BETA)
    stream = simulate(truth, T=400.0, seed=7, method="branching")
    tol = 1e-5 * stream.n_events
    for eta in (2.0, 10.0, 40.0):
        fit = fit_hawkes(stream, beta=BETA, penalty="l1", eta=eta)
        dmu, dalpha = fit.model.log_likelihood_gradient(stream)
        free = fit.alpha > 0
        assert np.all(np.abs(dmu) < tol)
        assert np.all(np.abs(dalpha[free] - eta) < tol), eta
        assert np.all(dalpha[~free] - eta <= tol), eta
        assert (~free).any()  # zeros do occur, and are exact (the mask is α̂ == 0, not α̂ < ε)


def test_support_log_likelihood_matches_the_unpenalised_fit_and_the_closed_form_of_no_excitation(one_node):
    two = simulate(HawkesModel.exponential([0.3, 0.3], [[0.0, 1.2], [0.0, 0.0]], beta=BETA), T=500.0, seed=2,
                   method="branching")
    kern = ExponentialKernel(beta=BETA)
    full = support_log_likelihood(two, kern, np.ones((2, 2), bool))
    assert full == pytest.approx(fit_hawkes(two, beta=BETA).log_likelihood, rel=1e-9)
    counts = np.bincount(two.nodes, minlength=2)
    T = two.duration
    none = sum(m * math.log(m / T) - m for m in counts)  # μ̂_i = M_i / T
    assert support_log_likelihood(two, kern, np.zeros((2, 2), bool)) == pytest.approx(none, rel=1e-9)


def test_eta_bic_finds_the_true_support_and_its_path_is_what_it_says():
    truth = HawkesModel.exponential([0.3, 0.3], [[0.0, 1.2], [0.0, 0.0]], beta=BETA)
    stream = simulate(truth, T=1500.0, seed=2, method="branching")
    fit = fit_hawkes(stream, beta=BETA, penalty="l1", eta="bic")
    assert (fit.alpha > 0).tolist() == [[False, True], [False, False]]
    path = fit.eta_path
    rows = path.to_dicts()
    assert len(rows) == 25 and sum(r["selected"] for r in rows) == 1
    assert [r["eta"] for r in rows] == sorted(r["eta"] for r in rows)
    assert rows[-1]["eta"] == pytest.approx(eta_max(stream, [ExponentialKernel(beta=BETA)])) and rows[-1]["n_alpha"] == 0
    chosen = next(r for r in rows if r["selected"])
    assert fit.eta == chosen["eta"] and chosen["bic"] == min(r["bic"] for r in rows)
    mask = fit.alpha > 0  # BIC recomputed: −2 ℓ(refit on the support) + (|S| + 2 μ's) log M
    ll = support_log_likelihood(stream, ExponentialKernel(beta=BETA), mask)
    assert chosen["bic"] == pytest.approx(-2 * ll + (mask.sum() + 2) * math.log(stream.n_events), rel=1e-9)
    assert "least BIC" in repr(fit)
    cold = fit_hawkes(stream, beta=BETA, penalty="l1", eta=fit.eta)  # the path starts each η from the last: same fit
    assert np.array_equal(cold.alpha > 0, fit.alpha > 0) and np.allclose(cold.alpha, fit.alpha, rtol=1e-6, atol=1e-9)
    assert cold.mu == pytest.approx(fit.mu, rel=1e-6)


def test_a_named_eta_needs_l1_and_a_known_name():
    stream = simulate(HawkesModel.exponential([0.5], [[0.5]], beta=BETA), T=50.0, seed=1, method="branching")
    with pytest.raises(HawkesError, match="penalty='l1'"):
        fit_hawkes(stream, beta=BETA, penalty="l2", eta="bic")
    with pytest.raises(HawkesError, match="'bic'"):
        fit_hawkes(stream, beta=BETA, penalty="l1", eta="aic")
    with pytest.raises(CascadeError, match="penalty = 'l1'"):
        CascadeConfig(penalty="none", eta="bic")
    with pytest.raises(CascadeError, match="eta must be"):
        CascadeConfig(penalty="l1", eta=-1.0)
    assert CascadeConfig(penalty="l1", eta="bic").eta == "bic"


def _target(seed: int, eta: float, n: int = 3):
    """The per-target problem of node 0 of three independent Poisson nodes (β = 1), at L1 strength η."""
    from uncertainty_lab.hawkes.excitation import design_matrices, total_integrals
    from uncertainty_lab.hawkes.target import _TargetProblem

    stream = simulate(HawkesModel.exponential([0.5] * n, np.zeros((n, n)), beta=1.0), T=300.0, seed=seed,
                      method="branching")
    kern = ExponentialKernel(beta=1.0)
    c = np.concatenate([[stream.duration], total_integrals(kern, stream.times, stream.nodes, n, stream.end_time)])
    X = design_matrices(kern, stream.times, stream.nodes, n, np.arange(n))[0]
    grad0 = stream.duration / X.shape[0] * X[:, 1:].sum(axis=0) - c[1:]  # the KKT threshold of each α at 0
    return _TargetProblem.from_design(X, c, "l1", eta), X.shape[0], grad0


def test_a_target_with_no_excitation_is_solved_in_closed_form_and_the_solver_agrees():
    """η above every α's KKT threshold: μ = M_i/T, α = 0, no iteration — and L-BFGS-B from scratch reaches the same."""
    prob, m, grad0 = _target(seed=1, eta=0.0)
    prob, _, _ = _target(seed=1, eta=float(grad0.max()) * 1.01)
    z, ok, nit = prob.solve(2000, 1e-8)
    assert ok and nit == 0 and z.tolist() == [float(m)] + [0.0] * (z.size - 1)
    from scipy.optimize import minimize

    res = minimize(prob.fun, np.full(z.size, m / 4), jac=True, method="L-BFGS-B",
                   bounds=[(lo, None) for lo in prob.lower], options={"ftol": 1e-15, "gtol": 1e-10})
    assert res.x[0] == pytest.approx(m, rel=1e-6) and np.all(res.x[1:] < 1e-6 * m)
    below, _, _ = _target(seed=1, eta=float(grad0.max()) * 0.9)
    assert below._no_excitation() is None and below.solve(2000, 1e-8)[0][1:].max() > 0


def test_the_active_set_step_puts_a_hair_at_zero_only_where_the_kkt_condition_allows():
    prob, m, grad0 = _target(seed=3, eta=0.0)
    prob, _, _ = _target(seed=3, eta=float(grad0.max()) * 1.01)  # optimum: α = 0 (closed form above)
    z = np.where(prob.cols == 0, float(m), 0.0)
    hair = z.copy()
    hair[1] = 1e-12 * m
    snapped, ok = prob._snap_zeros(hair, False, 1e-8)
    assert ok and snapped[1] == 0.0
    weak, _, _ = _target(seed=3, eta=float(grad0.max()) * 0.5)  # some α > 0 at the optimum
    z, _, _ = weak.solve(2000, 1e-8)
    j = int(np.argmax(z[1:])) + 1
    assert z[j] > 1e-6 * m and weak._snap_zeros(z, True, 1e-8)[0][j] == z[j]  # a real excitation is never a hair
