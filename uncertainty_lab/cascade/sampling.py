"""Drawing the next (τ_t, n_t) of the cascade from the fitted Hawkes process (HawkesLLM §2.3).

``HawkesModel.sample_next(history, now, rng)`` rebuilds the excitation from the whole history on every call
(it validates the arrays and runs the O(M·N) recursion), so a cascade step would cost O(history). For kernels
that are sums of exponentials (the paper's exponential kernel included), :func:`next_event` hands the
:class:`~uncertainty_lab.contracts.memory.History`'s incremental per-node state to the Hawkes engine's
:func:`~uncertainty_lab.hawkes.simulate.next_event_from_state` instead: O(N) per step, the same thinning and the
same use of the generator as ``sample_next``. Other kernels fall back to ``sample_next``.

Generated events feed back: the loop appends each generated event to the history, so it excites later events
like any other (the paper leaves this open; feedback is the natural reading of a self-exciting simulation).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..contracts.memory import CascadeError, History
from ..hawkes.simulate import exponential_decays, next_event_from_state

__all__ = ["as_generator", "has_fast_path", "next_event"]


def has_fast_path(model) -> bool:
    """True when the Hawkes model's kernel is a non-increasing sum of exponentials (the O(N) thinning applies)."""
    return exponential_decays(model) is not None


def next_event(model, history: History, rng: np.random.Generator, *, now: float | None = None,
               horizon: float | None = None, fast: bool = True) -> tuple[float, int] | None:
    """The next event (τ, n) of the Hawkes ``model`` (a :class:`~uncertainty_lab.hawkes.HawkesModel`) after
    ``now`` (default: the last event time) given ``history``, or None when no event comes before ``horizon``
    (or ever, when the intensity has died out).

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
    decays = exponential_decays(model) if fast else None
    if decays is None:
        return model.sample_next((history.times.copy(), history.nodes.copy()), now, rng, horizon=horizon)
    if history.n_nodes != model.n_nodes:
        raise CascadeError(f"the history has {history.n_nodes} nodes but the Hawkes model has {model.n_nodes}")
    state = np.zeros((decays.size, model.n_nodes))
    if len(history):
        for k, d in enumerate(decays):
            state[k] = history.excitation(now, d, right=True)
    return next_event_from_state(model, state, now, rng, horizon)


def as_generator(rng: Any, what: str = "rng") -> np.random.Generator:
    """A numpy Generator from a Generator or an int seed (None is refused: results must be reproducible)."""
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) and rng >= 0:
        return np.random.default_rng(int(rng))
    raise CascadeError(f"{what} must be a numpy Generator or an int seed >= 0, got {rng!r}")
