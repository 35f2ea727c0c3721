"""Drawing the next (τ_t, n_t) of the cascade from the fitted Hawkes process (HawkesLLM §2.3).

``HawkesModel.sample_next(history, now, rng)`` rebuilds the excitation from the whole history on every call
(it validates the arrays and runs the O(M·N) recursion), so a cascade step would cost O(history). For kernels
that are sums of exponentials (the paper's exponential kernel included), :func:`next_event` runs the same
Ogata thinning from the :class:`~uncertainty_lab.cascade.model.History`'s incremental per-node state instead:
O(N) per step, and the **same draws** as ``sample_next`` for the same generator (it consumes the generator
exactly as the engine does: batches of 4096 standard exponentials, then 4096 uniforms). Other kernels fall back
to ``sample_next``.

Generated events feed back: the loop appends each generated event to the history, so it excites later events
like any other (the paper leaves this open; feedback is the natural reading of a self-exciting simulation).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..contracts.memory import CascadeError, History

__all__ = ["has_fast_path", "next_event"]

_BATCH = 4096  # must equal uncertainty_lab.hawkes.simulate._BATCH for identical draws


def _components(model) -> tuple[np.ndarray, np.ndarray] | None:
    comp = getattr(model.kernel, "components", None)
    if not callable(comp):
        return None
    w, d = comp()
    return np.asarray(w, dtype=float), np.asarray(d, dtype=float)


def has_fast_path(model) -> bool:
    """True when the kernel is a sum of exponentials with a non-increasing shape (the O(N) thinning applies)."""
    return _components(model) is not None and bool(getattr(model.kernel, "decreasing", False))


def next_event(model, history: History, rng: np.random.Generator, *, now: float | None = None,
               horizon: float | None = None, fast: bool = True) -> tuple[float, int] | None:
    """The next event (τ, n) after ``now`` (default: the last event time) given ``history``, or None when no
    event comes before ``horizon`` (or ever, when the intensity has died out).

    ``fast=True`` uses the O(N) thinning from the history's exponential state when the kernel allows it;
    otherwise (or with ``fast=False``) it calls ``model.sample_next`` on the history's arrays.
    """
    if now is None:
        now = history.last_time if len(history) else 0.0
    now = float(now)
    if not math.isfinite(now):
        raise CascadeError(f"now must be a finite time, got {now!r}")
    if len(history) and now < history.last_time:
        raise CascadeError(f"now={now!r} is before the last history event at {history.last_time!r}")
    end = math.inf if horizon is None else float(horizon)
    if not (fast and has_fast_path(model)):
        return model.sample_next((history.times.copy(), history.nodes.copy()), now, rng, horizon=horizon)
    weights, decays = _components(model)
    mu, alpha, n_nodes = model.mu, model.alpha, model.n_nodes
    if history.n_nodes != n_nodes:
        raise CascadeError(f"the history has {history.n_nodes} nodes but the Hawkes model has {n_nodes}")
    exc = np.zeros((decays.size, n_nodes))
    if len(history):
        for k, d in enumerate(decays):
            exc[k] = weights[k] * (history.excitation(now, d, right=True) @ alpha)
    mu_total = float(mu.sum())
    tot_k = exc.sum(axis=1).tolist()
    dec = decays.tolist()
    bound = mu_total + sum(tot_k)
    s = now
    e_draws: list[float] = []
    u_draws: list[float] = []
    i = _BATCH
    while bound > 0.0:
        if i == _BATCH:
            e_draws = rng.standard_exponential(_BATCH).tolist()
            u_draws = rng.random(_BATCH).tolist()
            i = 0
        e, u = e_draws[i], u_draws[i]
        i += 1
        s = s + e / bound
        if not s <= end:
            return None
        total = mu_total + sum(tk * math.exp(-dk * (s - now)) for tk, dk in zip(tot_k, dec, strict=True))
        d_draw = u * bound
        if d_draw <= total:
            lam = mu + (np.exp(-decays * (s - now)) @ exc if decays.size > 1 else exc[0] * math.exp(-dec[0] * (s - now)))
            node = min(int(np.searchsorted(np.cumsum(lam), d_draw, side="right")), n_nodes - 1)
            return s, node
        bound = total
    return None


def as_generator(rng: Any, what: str = "rng") -> np.random.Generator:
    """A numpy Generator from a Generator or an int seed (None is refused: results must be reproducible)."""
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) and rng >= 0:
        return np.random.default_rng(int(rng))
    raise CascadeError(f"{what} must be a numpy Generator or an int seed >= 0, got {rng!r}")
