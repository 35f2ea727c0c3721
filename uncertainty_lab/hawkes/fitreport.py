"""What :func:`~uncertainty_lab.hawkes.fit_hawkes` reports besides the model: the per-candidate table and whether the
data determine the decay β at all.

With α̂ = 0 at every candidate the log-likelihood ℓ = Σ_i (Σ_{n_m = i} log μ_i − μ_i T) does not involve the kernel,
so it is the same at every β of the grid and "the best β" is whichever the grid lists first: the fit then
reports β as undetermined instead (:func:`beta_undetermined`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..table import Table
from .kernels import ExponentialKernel

__all__ = ["beta_undetermined", "candidate_table"]


def beta_undetermined(candidates: list[Any], untimed: bool = False) -> str:
    """Why the data do not determine β (``""`` when they do): two or more exponential candidates and α̂ = 0 at
    every one (the log-likelihood is then equal across the grid), or a stream with no timing information."""
    expo = [c for c in candidates if isinstance(c.kernel, ExponentialKernel)]
    if len(expo) < 2 or len(expo) != len(candidates):
        return ""
    if untimed:
        return ("β is undetermined: all events are at one time, so the stream holds no inter-event time to "
                f"read a decay from; the log-likelihood is the same at every β of the grid "
                f"{[c.kernel.beta for c in expo]}.")
    if all(not np.any(c.model.alpha) for c in expo):
        return ("β is undetermined: α̂ = 0 at every β of the grid "
                f"{[c.kernel.beta for c in expo]}, so the log-likelihood does not depend on β (it is the same at "
                "each) and no choice among them is the data's.")
    return ""


def candidate_table(candidates: list[Any], best: Any, penalty: str, eta: float, *, validated: bool,
                    beta_note: str = "") -> Table:
    """One row per candidate: its β (or kernel), log-likelihoods, ρ(G), stability, convergence, selection; when β
    is undetermined (``beta_note``) the title says so and no row is marked selected."""
    rows = []
    for c in candidates:
        row = {
            "beta": getattr(c.kernel, "beta", float("nan")),
            "kernel": repr(c.kernel),
            "loglik": c.log_likelihood,
            "rho": c.rho,
            "stable": c.stable,
            "converged": c.converged,
        }
        if penalty != "none":
            row["penalized"] = c.penalized
        if validated:
            row["val_loglik"] = c.validation_log_likelihood
        row["selected"] = c is best and not beta_note
        rows.append(row)
    columns = list(rows[0])
    if all(isinstance(c.kernel, ExponentialKernel) for c in candidates):
        columns.remove("kernel")
    else:
        columns.remove("beta")
    title = f"fit_hawkes candidates (penalty={penalty}, eta={eta:g})"
    if beta_note:
        title += f" — {beta_note}"
    return Table(rows, columns, title=title)
