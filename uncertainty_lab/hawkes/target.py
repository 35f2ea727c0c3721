"""The per-target problem of the Hawkes fit: −(ℓ_i − η Ω) for one target node i in scaled variables, solved by
L-BFGS-B with bounds ≥ 0 and polished by projected Newton steps (used by :mod:`.fit`, which documents the model).

With ``penalty="l1"`` the bound-constrained solver returns α_{j,i} = 0 exactly where the optimum has it (L-BFGS-B
projects onto the bound; the polishing step clips to it), and the final KKT check demands ∂/∂z_j ≥ −gtol there:
the zero pattern is that of the penalised optimum, which ``tests/test_hawkes_l1.py`` checks against the closed-form
threshold of a one-node process.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy.optimize import minimize

__all__: list[str] = []


class _TargetProblem:
    """−(ℓ_i − η Ω) / M_i in scaled variables z_k = c_k θ_k (θ = (μ_i, α_{0,i}, …, α_{N−1,i}),
    c = (T − t0, C_0, …, C_{N−1})), so that the linear part is Σ z and every variable counts expected events.

    ``A`` is the design matrix X_i = [1, E_j(τ_m)] of the active columns (c_k > 0) divided by c_k — the only
    per-event array kept (8 bytes per event and column); :meth:`from_design` builds it from a full X."""

    def __init__(self, A: np.ndarray, c: np.ndarray, penalty: str, eta: float):
        self.A, self.c, self.m = A, c, A.shape[0]
        self.cols = np.flatnonzero(c > 0)
        self.penalty, self.eta = penalty, eta
        is_alpha = self.cols > 0
        self.pen_l1 = np.where(is_alpha, eta / c[self.cols], 0.0) if penalty == "l1" else None
        self.pen_l2 = np.where(is_alpha, eta / c[self.cols] ** 2, 0.0) if penalty == "l2" else None
        self.lower = np.where(is_alpha, 0.0, 1e-12 * max(self.m, 1))

    @classmethod
    def from_design(cls, X: np.ndarray, c: np.ndarray, penalty: str, eta: float) -> _TargetProblem:
        """The problem for a design matrix X with a column per entry of c (inactive ones, c_k = 0, dropped)."""
        cols = np.flatnonzero(c > 0)
        return cls(X[:, cols] / c[cols], c, penalty, eta)

    def theta(self, z: np.ndarray) -> np.ndarray:
        out = np.zeros(self.c.size)
        out[self.cols] = z / self.c[self.cols]
        return out

    def fun(self, z: np.ndarray) -> tuple[float, np.ndarray]:
        lam = self.A @ z
        if np.any(lam <= 0):
            return math.inf, np.full(z.size, np.nan)
        f = -np.log(lam).sum() + z.sum()
        g = -(self.A.T @ (1.0 / lam)) + 1.0
        if self.pen_l1 is not None:
            f += self.pen_l1 @ z
            g = g + self.pen_l1
        if self.pen_l2 is not None:
            f += self.pen_l2 @ (z * z)
            g = g + 2.0 * self.pen_l2 * z
        return f / self.m, g / self.m

    def hess(self, z: np.ndarray) -> np.ndarray:
        lam = self.A @ z
        h = (self.A / lam[:, None]).T @ (self.A / lam[:, None])
        if self.pen_l2 is not None:
            h = h + np.diag(2.0 * self.pen_l2)
        return h / self.m

    def loglik(self, z: np.ndarray) -> float:
        """ℓ_i = Σ log λ_i(τ_m) − c·θ at z (unpenalised), with λ = A z = X θ."""
        lam = self.A @ z
        if np.any(lam <= 0):
            return -math.inf
        return float(np.log(lam).sum() - self.c @ self.theta(z))

    def solve(self, maxiter: int, gtol: float, start: np.ndarray | None = None) -> tuple[np.ndarray, bool, int]:
        """(z, converged, iterations): the closed form when α = 0 is optimal; else, given a ``start`` (a nearby
        problem's solution: the η path), projected Newton from it, kept when it passes the KKT check; else L-BFGS-B
        from a neutral start, polished."""
        m = self.m
        z_null = self._no_excitation()
        if z_null is not None:
            return z_null, True, 0
        if start is not None and np.shape(start) == self.lower.shape:
            z, ok = self._polish(np.maximum(np.asarray(start, dtype=float), self.lower), gtol)
            z, ok = self._snap_zeros(z, ok, gtol)
            if ok:
                return z, True, 0
        z0 = np.empty(self.cols.size)
        z0[self.cols == 0] = 0.5 * m
        z0[self.cols > 0] = 0.5 * m / max(1, int((self.cols > 0).sum()))
        bounds = [(lo, None) for lo in self.lower]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            res = minimize(self.fun, z0, jac=True, method="L-BFGS-B", bounds=bounds,
                           options={"maxiter": maxiter, "ftol": 1e-15, "gtol": gtol, "maxcor": 30})
        z = np.maximum(res.x, self.lower)
        z, ok = self._polish(z, gtol)
        z, ok = self._snap_zeros(z, ok, gtol)
        return z, bool(res.success or ok), int(res.nit)

    def _no_excitation(self) -> np.ndarray | None:
        """The optimum in closed form when it has no excitation: μ_i = M_i / T (z_μ = M_i), α_{·,i} = 0 — which it is
        exactly when the KKT condition holds there, ∂/∂z_j ≥ 0 for every α (with l1: η ≥ (T/M_i) Σ_m E_j(τ_m) − C_j).
        None otherwise (or when there is no α column)."""
        if not np.any(self.cols > 0) or not np.any(self.cols == 0):
            return None
        z = np.where(self.cols == 0, float(self.m), 0.0)
        f, g = self.fun(z)
        return z if math.isfinite(f) and np.all(g[self.cols > 0] >= 0) else None

    def _snap_zeros(self, z: np.ndarray, ok: bool, gtol: float) -> tuple[np.ndarray, bool]:
        """An active-set step for the last digits: an α left a hair above its bound (z_j ≤ 10⁻⁶ M_i expected events,
        e.g. ~1e-16 where the KKT condition at 0 holds with equality, η = η_max) is tried at 0 exactly, the rest
        re-polished; kept if the objective is no worse and the KKT check passes — so "α̂ > 0" means excitation."""
        tiny = (self.cols > 0) & (z > self.lower) & (z <= 1e-6 * max(self.m, 1))
        if not tiny.any():
            return z, ok
        trial = z.copy()
        trial[tiny] = self.lower[tiny]
        trial, trial_ok = self._polish(trial, gtol)
        f, f_trial = self.fun(z)[0], self.fun(trial)[0]
        if trial_ok and f_trial <= f + 1e-12 * max(abs(f), 1.0):
            return trial, trial_ok
        return z, ok

    def _polish(self, z: np.ndarray, gtol: float) -> tuple[np.ndarray, bool]:
        """A few projected Newton steps with the exact Hessian on the free variables (L-BFGS-B's last
        digits), then the KKT check: |grad| ≤ gtol on free variables, grad ≥ −gtol at the bound."""
        for _ in range(20):
            f, g = self.fun(z)
            at_bound = (z <= self.lower * (1 + 1e-9)) & (g > 0)
            free = ~at_bound
            if not free.any():
                break
            if np.max(np.abs(g[free])) <= gtol * 1e-3:
                break
            h = self.hess(z)[np.ix_(free, free)]
            try:
                step = np.linalg.solve(h, g[free])
            except np.linalg.LinAlgError:
                break
            t = 1.0
            improved = False
            while t > 1e-8:
                trial = z.copy()
                trial[free] = np.maximum(z[free] - t * step, self.lower[free])
                ft, _ = self.fun(trial)
                if ft <= f:
                    z, improved = trial, True
                    break
                t *= 0.5
            if not improved:
                break
        f, g = self.fun(z)
        at_bound = z <= self.lower * (1 + 1e-9)
        ok = bool(np.all(np.abs(g[~at_bound]) <= gtol) and np.all(g[at_bound] >= -gtol)) if math.isfinite(f) else False
        return z, ok

    def stderr(self, z: np.ndarray) -> np.ndarray:
        """Standard errors of θ: sqrt(diag(H_free⁻¹)) with H = Xᵀ diag(1/λ²) X (+ 2η for l2) on the free
        variables (X = A·c, so H = c (Aᵀ diag(1/λ²) A) c); NaN at the bound and for inactive columns."""
        out = np.full(self.c.size, np.nan)
        lam = self.A @ z
        free = z > self.lower * (1 + 1e-6) + 1e-9 * max(self.m, 1)
        if not free.any():
            return out
        theta_cols = self.cols[free]
        b = self.A[:, free]
        b /= lam[:, None]
        cf = self.c[theta_cols]
        h = (b.T @ b) * np.outer(cf, cf)
        if self.pen_l2 is not None:
            h = h + np.diag(np.where(theta_cols > 0, 2.0 * self.eta, 0.0))
        try:
            cov = np.linalg.inv(h)
        except np.linalg.LinAlgError:
            return out
        out[theta_cols] = np.sqrt(np.clip(np.diag(cov), 0.0, None))
        return out
