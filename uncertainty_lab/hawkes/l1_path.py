"""The strength η of the L1-penalised Hawkes fit chosen by BIC along a path: ``fit_hawkes(..., penalty="l1", eta="bic")``.

The paper's fit is a penalised MLE, argmax ℓ_β − η Σ α (HawkesLLM §2.2); with α ≥ 0 its optimum has exact zeros,
and Algorithm 1 keeps a node j for target n_t only when α̂_{j,n_t} > 0 — so η decides which excitations the memory
believes in. The paper gives no η. This module chooses it from the training events alone, as a user would on real
data (nothing downstream, such as a selector comparison, is looked at):

1. η_max, the smallest η at which every α̂ is 0 — the KKT condition at α = 0 with μ̂_i = M_i / T:
   η_max = max over candidate kernels, targets i with M_i > 0 and timed sources j of (T / M_i) Σ_{n_m = i} E_j(τ_m) − C_j.
2. The path η_max · 10^{−3 … 0}, ``n_eta`` log-spaced values (the span glmnet uses by default).
3. Each η's penalised fit gives a support S_η = {(j, i): α̂_{j,i} > 0} and a kernel (β̂_η). The support is scored by
   the Bayesian information criterion of its maximum-likelihood refit (the penalised ℓ is biased down by the
   shrinkage; BIC compares models at their MLE — the "relaxed lasso" / LARS–OLS hybrid way of scoring a support):
   BIC(η) = −2 ℓ̂(S_η, β̂_η) + (|S_η| + #{i: μ̂_i > 0}) · log M, M = training events (Schwarz 1978; the number of
   non-zero coefficients is the lasso's degrees of freedom, Zou, Hastie & Tibshirani 2007).
4. The least BIC wins (ties: the smaller η, less shrinkage). The *penalised* fit at that η is returned, as the paper
   specifies the estimator; the path is its ``.eta_path`` table.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..table import Table
from .errors import HawkesError, UnstableFitError
from .excitation import design_matrices, total_integrals
from .target import _TargetProblem

__all__ = ["CRITERIA", "bic_path", "eta_max", "support_log_likelihood"]

#: the η selectors ``fit_hawkes(eta=...)`` accepts by name
CRITERIA = ("bic",)
#: values on the η path and the smallest η as a share of η_max
N_ETA, ETA_SPAN = 25, 1e-3


def _features(kern: Any, stream: Any, untimed: Sequence[int]) -> tuple[np.ndarray, list[np.ndarray]]:
    """C_j (0 for an untimed source: no α column, as in the fit) and the per-target design matrices [1, E_j]."""
    n = stream.n_nodes
    totals = total_integrals(kern, stream.times, stream.nodes, n, stream.end_time)
    totals[list(untimed)] = 0.0
    return totals, design_matrices(kern, stream.times, stream.nodes, n, np.arange(n))


def eta_max(stream: Any, kernels: Sequence[Any], untimed: Sequence[int] = ()) -> float:
    """The smallest η at which the L1 fit has α̂ = 0 at every candidate kernel (0 when no excitation improves ℓ):
    max over kernels, targets i with events and sources j with C_j > 0 of (T / M_i) Σ_{n_m = i} E_j(τ_m) − C_j."""
    top = 0.0
    for kern in kernels:
        totals, designs = _features(kern, stream, untimed)
        timed = totals > 0
        for x in designs:
            if x.shape[0] and timed.any():
                grad = (stream.duration / x.shape[0]) * x[:, 1:].sum(axis=0) - totals
                top = max(top, float(grad[timed].max()))
    return top


def support_log_likelihood(stream: Any, kern: Any, support: np.ndarray, untimed: Sequence[int] = (), *,
                           features: tuple | None = None, maxiter: int = 2000, gtol: float = 1e-8) -> float:
    """max ℓ over μ ≥ 0 and α ≥ 0 with α_{j,i} = 0 off ``support`` (``[source, target]`` booleans), kernel fixed:
    the unpenalised refit of a support, per target on its own."""
    totals, designs = features if features is not None else _features(kern, stream, untimed)
    total = 0.0
    for i, x in enumerate(designs):
        if x.shape[0] == 0:  # a silent target: μ_i = α_{·,i} = 0 give ℓ_i = 0
            continue
        c = np.concatenate([[stream.duration], np.where(support[:, i], totals, 0.0)])
        prob = _TargetProblem.from_design(x, c, "none", 0.0)
        z, _, _ = prob.solve(maxiter, gtol)
        total += prob.loglik(z)
    return total


def bic_path(stream: Any, fit_at: Callable[[float], Any], kernels: Sequence[Any], untimed: Sequence[int] = (), *,
             n_eta: int = N_ETA, span: float = ETA_SPAN) -> tuple[Any, Table]:
    """(the penalised fit of least BIC, the path table): ``fit_at(η)`` is the L1 fit at η (its warnings are held
    back here: the caller reissues the chosen fit's); see the module docstring for the path and the score."""
    top = eta_max(stream, kernels, untimed)
    etas = [0.0] if top <= 0 else [float(e) for e in top * np.logspace(math.log10(span), 0.0, n_eta)]
    rows, best, failed, cache = [], None, None, {}
    for eta in etas:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                fit = fit_at(eta)
            except UnstableFitError as exc:
                failed = exc
                rows.append({"eta": eta, "beta": math.nan, "n_alpha": -1, "loglik_penalised": math.nan,
                             "loglik_refit": math.nan, "bic": math.nan, "selected": False})
                continue
        kern = fit.model.kernel
        if repr(kern) not in cache:
            cache = {repr(kern): _features(kern, stream, untimed)}  # one kernel's features at a time
        support = fit.alpha > 0
        ll = support_log_likelihood(stream, kern, support, untimed, features=cache[repr(kern)])
        score = -2.0 * ll + (int(support.sum()) + int(np.sum(fit.mu > 0))) * math.log(max(stream.n_events, 2))
        rows.append({"eta": eta, "beta": fit.beta if fit.beta is not None else math.nan,
                     "n_alpha": int(support.sum()), "loglik_penalised": fit.log_likelihood, "loglik_refit": ll,
                     "bic": score, "selected": False})
        if best is None or score < best[0] - 1e-9 * abs(best[0]):
            best = (score, fit, len(rows) - 1)
    if best is None:
        raise failed if failed is not None else HawkesError("no η of the path could be fitted")
    rows[best[2]]["selected"] = True
    title = (f"η path: {len(etas)} values η_max·10^(−3…0), η_max = {top:.4g}; BIC of each support's ML refit "
             f"(log M = log {stream.n_events}); least BIC selected")
    return best[1], Table(rows, title=title)
