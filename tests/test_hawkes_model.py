"""HawkesModel: the alpha[source, target] convention, intensity, compensator, log-likelihood (recursion vs
brute force), gradient, branching matrix, stability and stationary rates."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate

from uncertainty_lab.hawkes import (
    EventStream,
    ExponentialKernel,
    HawkesError,
    HawkesModel,
    PowerLawKernel,
    SumOfExponentialsKernel,
    UnstableModelError,
    simulate,
)

MU = np.array([0.4, 0.2, 0.3])
ALPHA = np.array([[0.6, 0.5, 0.0], [0.1, 0.4, 0.3], [0.4, 0.0, 0.5]])  # [source, target]


def brute_force_loglik(model, stream):
    """O(M²) textbook formula: Σ_m log λ_{n_m}(τ_m) − Σ_i ∫_0^T λ_i, every pair summed directly."""
    k, t, n, T = model.kernel, stream.times, stream.nodes, stream.end_time
    total = 0.0
    for m in range(t.size):
        earlier = t < t[m]
        lam = model.mu[n[m]] + np.sum(model.alpha[n[earlier], n[m]] * k.value(t[m] - t[earlier]))
        total += np.log(lam)
    compensator = model.mu.sum() * T + np.sum(model.alpha[n].sum(axis=1) * k.integral(T - t))
    return total - compensator


def brute_force_intensity(model, stream, s):
    earlier = stream.times < s
    return model.mu + (model.alpha[stream.nodes[earlier]] * model.kernel.value(s - stream.times[earlier])[:, None]).sum(0)


def test_indexing_alpha_source_target_is_pinned():
    # one-way excitation 0 -> 1: an event at node 0 raises λ_1 only, and only through alpha[0, 1]
    one_way = HawkesModel.exponential([0.1, 0.2], [[0.0, 0.5], [0.0, 0.0]], beta=2.0)
    history = EventStream([1.0], [0], 2, 1.0)
    lam = one_way.intensity(1.5, history)
    assert lam[0] == pytest.approx(0.1)
    assert lam[1] == pytest.approx(0.2 + 0.5 * np.exp(-2.0 * 0.5))
    reverse = HawkesModel.exponential([0.1, 0.2], [[0.0, 0.0], [0.5, 0.0]], beta=2.0)
    assert np.allclose(reverse.intensity(1.5, history), [0.1, 0.2])  # alpha[1, 0] needs a source event at 1
    assert np.allclose(reverse.intensity(1.5, EventStream([1.0], [1], 2, 1.0)), [0.1 + 0.5 * np.exp(-1.0), 0.2])
    # G keeps the layout: row = source; the stationary rates solve Λ = μ + Gᵀ Λ
    assert one_way.G[0, 1] == pytest.approx(0.25) and one_way.G[1, 0] == 0.0
    rates = one_way.stationary_rates()
    assert rates == pytest.approx([0.1, 0.2 + 0.25 * 0.1])


def test_intensity_is_left_continuous_and_vectorised():
    m = HawkesModel.exponential(MU, ALPHA, beta=1.5)
    s = EventStream([0.5, 1.0, 1.0, 2.0], [0, 1, 2, 0], 3, 3.0)
    q = np.array([0.0, 0.5, 0.7, 1.0, 1.5, 2.0, 2.9])
    lam = m.intensity(q, s)
    assert lam.shape == (7, 3)
    for row, t in zip(lam, q, strict=True):
        assert row == pytest.approx(brute_force_intensity(m, s, t), rel=1e-13)
    jump = m.intensity(1.0, s, right=True) - m.intensity(1.0, s)  # λ(t+) − λ(t) = α[1,·] + α[2,·]
    assert jump == pytest.approx(ALPHA[1] + ALPHA[2])
    assert m.intensity(0.3).shape == (3,) and m.intensity(0.3) == pytest.approx(MU)


@pytest.mark.parametrize(
    "kernel",
    [ExponentialKernel(beta=1.5), SumOfExponentialsKernel(decays="0.5, 3"), PowerLawKernel(c=0.5, theta=1.2)],
    ids=repr,
)
def test_compensator_integrates_the_intensity(kernel):
    m = HawkesModel(MU, ALPHA, kernel)
    s = EventStream([0.5, 1.0, 1.0, 2.0], [0, 1, 2, 0], 3, 3.0)
    comp = m.compensator([1.7, 3.0], s)
    breaks = [0.0, 0.5, 1.0, 2.0]
    for row, t in zip(comp, [1.7, 3.0], strict=True):
        for i in range(3):  # quad between events (the integrand jumps at them); accurate to ~1e-12
            pieces = [b for b in breaks if b < t] + [t]
            expected = sum(
                integrate.quad(lambda x, i=i: brute_force_intensity(m, s, x)[i], a, b, epsabs=0, epsrel=1e-12)[0]
                for a, b in zip(pieces[:-1], pieces[1:], strict=True)
            )
            assert row[i] == pytest.approx(expected, rel=1e-9)


@pytest.fixture(scope="module")
def data():
    truth = HawkesModel.exponential(MU, ALPHA, beta=1.5)
    return simulate(truth, T=800.0, seed=11, method="branching")


@pytest.mark.parametrize(
    "kernel",
    [ExponentialKernel(beta=1.5), ExponentialKernel(beta=40.0), SumOfExponentialsKernel(decays="0.2, 1, 6"),
     PowerLawKernel(c=0.3, theta=1.4)],
    ids=repr,
)
def test_log_likelihood_matches_brute_force(data, kernel):
    # exponential: the O(M·N) recursion; power law: the general chunked path. Both vs O(M²) pair sums.
    # 1e-10 relative: the only differences are summation order and exp() rounding (~1e-13 each).
    assert data.n_events > 1500
    m = HawkesModel(MU, ALPHA, kernel)
    assert m.log_likelihood(data) == pytest.approx(brute_force_loglik(m, data), rel=1e-10)


def test_recursion_stays_exact_over_long_horizons():
    # β·T ≫ 600 forces many blocks of the vectorised recursion, with the state carried between them
    m = HawkesModel.exponential([0.3, 0.2], [[0.5, 0.4], [0.2, 0.3]], beta=25.0)
    s = simulate(m, T=3000.0, seed=5, method="branching")
    assert 25.0 * s.end_time > 100 * 600
    assert m.log_likelihood(s) == pytest.approx(brute_force_loglik(m, s), rel=1e-10)


def test_conditional_likelihood_adds_up(data):
    m = HawkesModel.exponential(MU, ALPHA, beta=1.5)
    early, late = data.split(500.0)
    total = m.log_likelihood(early) + m.log_likelihood(late, history=early)
    assert total == pytest.approx(m.log_likelihood(data), rel=1e-12)


@pytest.mark.parametrize("kernel", [ExponentialKernel(beta=1.5), PowerLawKernel(c=0.3, theta=1.4)], ids=repr)
def test_gradient_matches_finite_differences(data, kernel):
    stream = EventStream(data.times[:400], data.nodes[:400], 3, float(data.times[399]))
    m = HawkesModel(MU, ALPHA + 0.05, kernel)  # interior point: every α > 0
    dmu, dalpha = m.log_likelihood_gradient(stream)
    h = 1e-6
    for i in range(3):
        e = np.zeros(3)
        e[i] = h
        fd = (m.with_params(mu=MU + e).log_likelihood(stream) - m.with_params(mu=MU - e).log_likelihood(stream)) / (2 * h)
        assert dmu[i] == pytest.approx(fd, rel=1e-6, abs=1e-5)  # central differences: error ~h² and ~eps·|ℓ|/h
    for j in range(3):
        for i in range(3):
            e = np.zeros((3, 3))
            e[j, i] = h
            a = ALPHA + 0.05
            fd = (m.with_params(alpha=a + e).log_likelihood(stream) - m.with_params(alpha=a - e).log_likelihood(stream)) / (2 * h)
            assert dalpha[j, i] == pytest.approx(fd, rel=1e-6, abs=1e-5)


def test_branching_matrix_stability_and_rates():
    m = HawkesModel.exponential(MU, ALPHA, beta=2.0)
    assert np.allclose(m.branching_matrix(), ALPHA / 2.0)
    rho = m.spectral_radius()
    assert rho == pytest.approx(max(abs(np.linalg.eigvals(ALPHA / 2.0))))
    assert rho == pytest.approx(HawkesModel.exponential(MU, ALPHA.T, 2.0).spectral_radius())  # ρ(G) = ρ(Gᵀ)
    assert m.is_stable
    rates = m.stationary_rates()
    assert rates == pytest.approx(MU + (ALPHA / 2.0).T @ rates)
    power = HawkesModel(MU, ALPHA, PowerLawKernel(c=0.5, theta=1.5))
    assert np.allclose(power.G, ALPHA * 0.5 ** -1.5 / 1.5)
    assert not power.is_stable
    with pytest.raises(UnstableModelError, match="ρ\\(G\\) = .* >= 1"):
        power.stationary_rates()
    assert "alpha[source, target]" in repr(m) and "stable" in repr(m)
    assert m.beta == 2.0 and power.beta is None


@pytest.mark.parametrize(
    "mu, alpha, words",
    [
        ([0.1, 0.2], [[0.1]], "alpha must have shape \\(N, N\\) = \\(2, 2\\)"),
        ([0.1, -0.2], [[0.1, 0], [0, 0]], "mu must be >= 0"),
        ([0.1, 0.2], [[0.1, np.nan], [0, 0]], "alpha must be finite"),
        ([0.1, 0.2], [[0.1, -1], [0, 0]], "alpha must be >= 0"),
    ],
)
def test_bad_parameters_are_refused(mu, alpha, words):
    with pytest.raises(HawkesError, match=words):
        HawkesModel.exponential(mu, alpha, 1.0)


def test_kernel_by_name_and_stream_mismatch():
    m = HawkesModel(0.5, 0.3, "power_law", theta=2.0)
    assert m.n_nodes == 1 and m.kernel.theta == 2.0
    with pytest.raises(HawkesError, match="n_nodes=2 but the model has 1"):
        m.log_likelihood(EventStream([0.1], [1], 2, 1.0))
    with pytest.raises(Exception, match="closest match: 'power_law'"):
        HawkesModel(0.5, 0.3, "powerlaw")
