"""The cascade lab checked against a known truth (data from a cascade world, :mod:`uncertainty_lab.worlds.cascade`,
whose events carry ``.truth``: the true μ, α (source → target), β of the Hawkes process that made them).

- **α recovered**: the fitted α̂ next to the true α, entry by entry, with ‖α̂ − α‖_F, the same for the branching
  matrices Ĝ = α̂/β̂ and G = α/β (the number of children one event has: comparable even when the fit chose
  another β than the truth's), and μ̂ vs μ.
- **Memory precision** of a run: which earlier events truly caused generated event e_t is, under the true
  process, a posterior given the run's times and nodes — parent j with probability
  p_t(j) = α_{n_j,n_t} e^{−β(τ_t − τ_j)} / (μ_{n_t} + Σ_{i<t} α_{n_i,n_t} e^{−β(τ_t − τ_i)}) over the run's
  events e_0..e_{t−1} (e_0 the seed), "immigrant" with the rest. The probability that j is an **ancestor** of t
  (parent, grandparent, …) is A_{t,j} = p_t(j) + Σ_{j<i<t} p_t(i) A_{i,j}. Memory precision at step t is the mean
  of A_{t,j} over the memory items j of step t — the expected share of the memory that truly influenced the
  new event; NaN (with the reason) when the memory is empty. It depends on the run's schedule (shared by every
  selector for run r) and the memory only, not on the texts.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..contracts.memory import CascadeError
from .diagnostics import StepValues

__all__ = ["alpha_recovery", "ancestor_probabilities", "memory_precision", "truth_in_order"]


def truth_in_order(truth: Mapping[str, Any], nodes: Sequence[str]) -> tuple[np.ndarray, np.ndarray, float]:
    """(μ, α, β) of ``truth`` re-indexed to the lab's ``nodes`` order (every lab node must be a truth node)."""
    names = list(truth["nodes"])
    missing = [n for n in nodes if n not in names]
    if missing:
        raise CascadeError(f"the data's truth has no node(s) {missing} (its nodes: {names}); set nodes to its nodes")
    idx = [names.index(n) for n in nodes]
    mu = np.asarray(truth["mu"], dtype=float)[idx]
    alpha = np.asarray(truth["alpha"], dtype=float)[np.ix_(idx, idx)]
    return mu, alpha, float(truth["beta"])


def ancestor_probabilities(times: Sequence[float], nodes: Sequence[int], mu: np.ndarray, alpha: np.ndarray,
                           beta: float) -> np.ndarray:
    """A[t, j] = P(event j is an ancestor of event t | times, nodes) under the true process, for j < t
    (0 elsewhere); event 0 has no known parent (see the module docstring)."""
    t = np.asarray(times, dtype=float)
    n = np.asarray(nodes, dtype=int)
    size = t.size
    A = np.zeros((size, size))
    for k in range(1, size):
        w = alpha[n[:k], n[k]] * np.exp(-beta * np.maximum(t[k] - t[:k], 0.0))
        total = mu[n[k]] + w.sum()
        if total <= 0:
            continue
        p = w / total
        A[k, :k] = p + p @ A[:k, :k]
    return A


def memory_precision(run: Any, truth: Mapping[str, Any], nodes: Sequence[str]) -> StepValues:
    """Memory precision per step t = 1..L of a CascadeRun (module docstring): mean over the memory items j of
    A[t, j]; NaN with reason "empty memory" when the step remembered nothing."""
    mu, alpha, beta = truth_in_order(truth, nodes)
    events = run.events
    A = ancestor_probabilities([e.time for e in events], [e.node for e in events], mu, alpha, beta)
    values, reasons = [], []
    for step in run.steps:
        idx = [m.index for m in step.memory]
        values.append(float(np.mean(A[step.step, idx])) if idx else math.nan)
        reasons.append(None if idx else "empty memory")
    return StepValues("memory_precision", np.asarray(values, dtype=float), tuple(reasons))


def alpha_recovery(model: Any, truth: Mapping[str, Any], nodes: Sequence[str]) -> dict[str, Any]:
    """The fitted HawkesModel against the truth: ``rows`` (source, target, true α, fitted α, true G, fitted G),
    ``alpha_error`` ‖α̂ − α‖_F, ``alpha_norm`` ‖α‖_F, ``G_error`` ‖Ĝ − G‖_F, ``rho`` / ``rho_fit``,
    ``beta`` / ``beta_fit``, ``mu`` / ``mu_fit`` and ``mu_error`` ‖μ̂ − μ‖₂."""
    mu, alpha, beta = truth_in_order(truth, nodes)
    a_hat = np.asarray(model.alpha, dtype=float)
    b_hat = float(model.beta) if model.beta is not None else math.nan
    G, G_hat = alpha / beta, np.asarray(model.branching_matrix(), dtype=float)
    rows = [{"source": nodes[j], "target": nodes[i], "alpha": alpha[j, i], "alpha_fit": a_hat[j, i],
             "G": G[j, i], "G_fit": G_hat[j, i]} for j in range(len(nodes)) for i in range(len(nodes))]
    return {
        "world": truth.get("world"), "rows": rows, "alpha": alpha, "alpha_fit": a_hat,
        "alpha_error": float(np.linalg.norm(a_hat - alpha)), "alpha_norm": float(np.linalg.norm(alpha)),
        "G_error": float(np.linalg.norm(G_hat - G)),
        "rho": float(np.max(np.abs(np.linalg.eigvals(G)))), "rho_fit": float(model.spectral_radius()),
        "beta": beta, "beta_fit": b_hat, "mu": mu, "mu_fit": np.asarray(model.mu, dtype=float),
        "mu_error": float(np.linalg.norm(np.asarray(model.mu, dtype=float) - mu)),
        "mutation": truth.get("mutation"),
    }


def alpha_table(recovery: Mapping[str, Any], nodes: Sequence[str]) -> str:
    """α true / fitted as a markdown matrix (rows: source, columns: target), each cell ``true → fitted``."""
    a, a_hat = recovery["alpha"], recovery["alpha_fit"]
    head = "| source → target | " + " | ".join(nodes) + " |"
    lines = [head, "|" + "---|" * (len(nodes) + 1)]
    for j, src in enumerate(nodes):
        lines.append(f"| {src} | " + " | ".join(f"{a[j, i]:.2f} → {a_hat[j, i]:.2f}" for i in range(len(nodes)))
                     + " |")
    return "\n".join(lines)
