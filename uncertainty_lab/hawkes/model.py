"""The multivariate Hawkes model λ_i(s) = μ_i + Σ_j Σ_{τ_m < s, n_m = j} φ_{j,i}(s − τ_m), φ_{j,i} = α_{j,i} s(u).

Indexing follows the paper: ``alpha[j, i]`` is the excitation **from source j to target i** (a row is what
one node sends, a column what one node receives). G_{j,i} = ∫φ_{j,i} = α_{j,i}‖s‖₁ (= α/β for the exponential
kernel); the process is stationary when the spectral radius ρ(G) < 1, with mean rates Λ = (I − Gᵀ)⁻¹μ.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .errors import HawkesError, UnstableModelError
from .events import EventStream
from .excitation import excitation, excitation_terms, finite_times, integrated_excitation, total_integrals
from .history import as_history, as_rng
from .kernels import as_kernel
from .simulate import next_event, simulate

__all__ = ["HawkesModel", "as_history"]


def _check_params(mu: Any, alpha: Any) -> tuple[np.ndarray, np.ndarray]:
    mu_arr = np.atleast_1d(np.asarray(mu, dtype=float))
    if mu_arr.ndim != 1:
        raise HawkesError(f"mu must be a vector of background rates (shape (N,)), got shape {mu_arr.shape}")
    n = mu_arr.size
    alpha_arr = np.asarray(alpha, dtype=float)
    if alpha_arr.ndim == 0 and n == 1:
        alpha_arr = alpha_arr.reshape(1, 1)
    if alpha_arr.shape != (n, n):
        raise HawkesError(
            f"alpha must have shape (N, N) = ({n}, {n}) to match mu, got {alpha_arr.shape}; "
            "alpha[j, i] is the excitation from source j to target i"
        )
    for name, arr in (("mu", mu_arr), ("alpha", alpha_arr)):
        if not np.all(np.isfinite(arr)):
            raise HawkesError(f"{name} must be finite, got {arr.tolist()}")
        if np.any(arr < 0):
            raise HawkesError(
                f"{name} must be >= 0 (a linear Hawkes process has non-negative rates and excitations), "
                f"got {arr.tolist()}"
            )
    mu_arr, alpha_arr = mu_arr.copy(), alpha_arr.copy()
    mu_arr.setflags(write=False)
    alpha_arr.setflags(write=False)
    return mu_arr, alpha_arr


class HawkesModel:
    """A linear multivariate Hawkes process with background rates μ, amplitudes α and a kernel shape.

    ``HawkesModel(mu, alpha, kernel)``: ``mu`` shape (N,), ``alpha`` shape (N, N) with ``alpha[j, i]`` from
    source j to target i, ``kernel`` a ``kernels`` plugin name (defaults of its parameters), class or instance.
    ``HawkesModel.exponential(mu, alpha, beta)`` is the paper's model, φ_{j,i}(u) = α_{j,i} e^{-βu}.
    """

    def __init__(self, mu: Any, alpha: Any, kernel: Any = "exponential", **kernel_params: Any):
        self.mu, self.alpha = _check_params(mu, alpha)
        self.kernel = as_kernel(kernel, **kernel_params)

    @classmethod
    def exponential(cls, mu: Any, alpha: Any, beta: float) -> HawkesModel:
        """The paper's model: φ_{j,i}(u) = α_{j,i} e^{-βu}, one decay β > 0, G = α/β."""
        from .kernels import ExponentialKernel

        return cls(mu, alpha, ExponentialKernel(beta=beta))

    def with_params(self, mu: Any = None, alpha: Any = None) -> HawkesModel:
        """The same kernel with new μ and/or α."""
        return HawkesModel(self.mu if mu is None else mu, self.alpha if alpha is None else alpha, self.kernel)

    @property
    def n_nodes(self) -> int:
        """N, the number of nodes."""
        return int(self.mu.size)

    @property
    def beta(self) -> float | None:
        """The exponential decay β (None for kernels without a single β)."""
        return getattr(self.kernel, "beta", None)

    # --- branching structure ------------------------------------------------------------------------

    def branching_matrix(self) -> np.ndarray:
        """G_{j,i} = ∫_0^∞ φ_{j,i}(u) du = α_{j,i} ‖s‖₁ (α/β for the exponential kernel): the expected number
        of direct offspring at target i of one event at source j."""
        return np.asarray(self.kernel.l1_norm(self.alpha), dtype=float)

    @property
    def G(self) -> np.ndarray:
        """The branching matrix, see :meth:`branching_matrix`."""
        return self.branching_matrix()

    def spectral_radius(self) -> float:
        """ρ(G), the largest |eigenvalue| of the branching matrix (unchanged by transposing G)."""
        return float(np.max(np.abs(np.linalg.eigvals(self.branching_matrix()))))

    @property
    def is_stable(self) -> bool:
        """ρ(G) < 1: the process has a stationary version with finite mean rates."""
        return self.spectral_radius() < 1.0

    def stationary_rates(self) -> np.ndarray:
        """The stationary mean rates Λ = (I − Gᵀ)⁻¹ μ (Λ_i = μ_i + Σ_j Λ_j G_{j,i}); needs ρ(G) < 1."""
        self._require_stable("stationary rates")
        return np.linalg.solve(np.eye(self.n_nodes) - self.branching_matrix().T, self.mu)

    def asymptotic_count_covariance(self) -> np.ndarray:
        """lim Cov(N(T)) / T = (I − Gᵀ)⁻¹ diag(Λ) (I − G)⁻¹ (Bartlett spectrum at frequency 0)."""
        rates = self.stationary_rates()
        inv = np.linalg.inv(np.eye(self.n_nodes) - self.branching_matrix().T)
        return inv @ np.diag(rates) @ inv.T

    def _require_stable(self, what: str) -> None:
        rho = self.spectral_radius()
        if rho >= 1.0:
            raise UnstableModelError(
                f"{what} need a stable model, but ρ(G) = {rho:.4g} >= 1 (the process explodes); "
                "reduce alpha or use a faster-decaying kernel (larger beta)"
            )

    # --- intensity, compensator, likelihood ---------------------------------------------------------

    def intensity(self, t: Any, history: Any = None, *, right: bool = False) -> np.ndarray:
        """λ_i(t) = μ_i + Σ_j α_{j,i} Σ_{τ_m < t, n_m = j} s(t − τ_m), for each query time (vectorised).

        Returns shape (len(t), N), or (N,) for a scalar ``t``. Events at exactly t are excluded (λ is
        left-continuous); ``right=True`` includes them (λ(t⁺), the value just after a jump).
        ``history`` is an EventStream, a (times, nodes) pair or None. A NaN or infinite ``t`` is an error.
        """
        times, nodes, _ = as_history(history, self.n_nodes)
        q = finite_times(t, "t")
        e = excitation(self.kernel, times, nodes, self.n_nodes, q.reshape(-1), right=right)
        lam = self.mu + e @ self.alpha
        return lam[0] if q.ndim == 0 else lam

    def compensator(self, t: Any, history: Any = None) -> np.ndarray:
        """Λ_i(t) = ∫_{t0}^t λ_i(s) ds = μ_i (t − t0) + Σ_j α_{j,i} Σ_{τ_m < t, n_m = j} ∫_0^{t−τ_m} s,
        with t0 the history's start_time (0 for a pair or None). Shape (len(t), N), or (N,) for a scalar; a NaN or
        infinite ``t`` is an error."""
        times, nodes, t0 = as_history(history, self.n_nodes)
        q = finite_times(t, "t")
        ie = integrated_excitation(self.kernel, times, nodes, self.n_nodes, q.reshape(-1))
        lam = np.outer(q.reshape(-1) - t0, self.mu) + ie @ self.alpha
        return lam[0] if q.ndim == 0 else lam

    def _window(self, stream: EventStream, history: EventStream | None):
        if not isinstance(stream, EventStream):
            raise HawkesError(f"stream must be an EventStream, got {type(stream).__name__}")
        if stream.n_nodes != self.n_nodes:
            raise HawkesError(
                f"stream has n_nodes={stream.n_nodes} but the model has {self.n_nodes} nodes"
            )
        if history is None:
            return stream.times, stream.nodes, 0, stream.start_time, stream.end_time
        if not isinstance(history, EventStream):
            raise HawkesError(f"history must be an EventStream (the events before stream), got {type(history).__name__}")
        joined = history.concat(stream)
        return joined.times, joined.nodes, history.n_events, stream.start_time, stream.end_time

    def _parts(self, stream, history):
        """The window's event nodes, intensities λ_{n_m}(τ_m), the sources' integrals C_j and the duration; the
        intensities are summed from :func:`excitation_terms` chunk by chunk (no M × N feature array)."""
        times, nodes, first, t0, end = self._window(stream, history)
        win_nodes = nodes[first:]
        exc = np.zeros(win_nodes.size)
        for lo, hi, term in excitation_terms(self.kernel, times, nodes, self.n_nodes, times[first:]):
            exc[lo:hi] += np.einsum("mj,jm->m", term, self.alpha[:, win_nodes[lo:hi]])
        lam = self.mu[win_nodes] + exc
        totals = total_integrals(self.kernel, times, nodes, self.n_nodes, end)
        if first:
            totals = totals - total_integrals(self.kernel, times[:first], nodes[:first], self.n_nodes, t0)
        return (times, nodes, first), win_nodes, lam, totals, end - t0

    def log_likelihood(self, stream: EventStream, history: EventStream | None = None) -> float:
        """ℓ = Σ_m log λ_{n_m}(τ_m) − Σ_i ∫_{t0}^T λ_i(s) ds on the stream's window [t0, T].

        For the exponential kernel λ_i(τ_m) = μ_i + Σ_j α_{j,i} R_j(m) by the O(M·N) recursion and
        ∫_0^T λ_i = μ_i T + Σ_m (α_{n_m,i}/β)(1 − e^{-β(T − τ_m)}). With ``history`` (the events before
        ``stream.start_time``) the likelihood is conditioned on them. Memory: O(M) plus one chunk of the recursion.
        """
        _, _, lam, totals, duration = self._parts(stream, history)
        if np.any(lam <= 0):
            return -np.inf
        return float(np.sum(np.log(lam)) - duration * self.mu.sum() - totals @ self.alpha.sum(axis=1))

    def log_likelihood_gradient(
        self, stream: EventStream, history: EventStream | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(∂ℓ/∂μ, ∂ℓ/∂α): ∂ℓ/∂μ_i = Σ_{n_m = i} 1/λ_i(τ_m) − (T − t0) and
        ∂ℓ/∂α_{j,i} = Σ_{n_m = i} E_j(τ_m)/λ_i(τ_m) − C_j, in the ``[source, target]`` layout of α (a second
        chunked pass over E once every λ is known)."""
        (times, nodes, first), win_nodes, lam, totals, duration = self._parts(stream, history)
        inv = 1.0 / lam
        dmu = np.bincount(win_nodes, weights=inv, minlength=self.n_nodes) - duration
        dalpha = -totals[:, None] * np.ones(self.n_nodes)
        for lo, hi, term in excitation_terms(self.kernel, times, nodes, self.n_nodes, times[first:]):
            onehot = np.zeros((hi - lo, self.n_nodes))
            onehot[np.arange(hi - lo), win_nodes[lo:hi]] = 1.0
            dalpha += (term * inv[lo:hi, None]).T @ onehot
        return dmu, dalpha

    # --- sampling -----------------------------------------------------------------------------------

    def sample_next(
        self, history: Any = None, now: float | None = None, rng: Any = None, *, horizon: float | None = None
    ) -> tuple[float, int] | None:
        """Draw the next event (τ, n) after ``now`` given ``history``, by Ogata thinning — one step of the
        HawkesLLM loop. The caller appends the event to the history (generated events feed back).

        ``now`` defaults to the history's end (its last event for a pair). Returns None when no event
        comes before ``horizon`` (or ever, when the intensity has died out). ``rng``: seed or Generator.
        """
        return next_event(self, history, now, as_rng(rng, "rng"), horizon)

    def simulate(self, T: float | None = None, max_events: int | None = None, seed: Any = None, **kwargs: Any):
        """Shortcut for :func:`uncertainty_lab.hawkes.simulate`."""
        return simulate(self, T=T, max_events=max_events, seed=seed, **kwargs)

    def __repr__(self) -> str:
        rho = self.spectral_radius()
        with np.printoptions(precision=4, suppress=True):
            return (
                f"HawkesModel(n_nodes={self.n_nodes}, kernel={self.kernel!r}, ρ(G)={rho:.4g} "
                f"({'stable' if rho < 1 else 'UNSTABLE'}),\n  mu={self.mu},\n  alpha[source, target]=\n"
                + "\n".join("    " + line for line in str(self.alpha).splitlines())
                + ")"
            )
