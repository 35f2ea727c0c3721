"""What a Hawkes model conditions on and draws with: a history as (times, nodes, start_time), a seed as a Generator.

Shared by the model (intensity, compensator) and the simulators, below both so neither imports the other.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .errors import HawkesError
from .events import EventStream

__all__ = ["as_history", "as_rng"]


def as_rng(seed: Any, name: str = "seed") -> np.random.Generator:
    """A numpy Generator from a Generator (used as is), a non-negative int, a SeedSequence or None (fresh entropy);
    anything else is an error naming ``name`` (the caller's argument)."""
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)) and seed >= 0:
        return np.random.default_rng(int(seed))
    if seed is None or isinstance(seed, np.random.SeedSequence):
        return np.random.default_rng(seed)
    raise HawkesError(f"{name} must be a non-negative integer or a numpy Generator (or None for fresh entropy), "
                      f"got {seed!r}")


def as_history(history: Any, n_nodes: int, name: str = "history") -> tuple[np.ndarray, np.ndarray, float]:
    """(times, nodes, start_time) from an EventStream, a (times, nodes) pair or None (no events)."""
    if history is None:
        return np.zeros(0), np.zeros(0, dtype=np.int64), 0.0
    if isinstance(history, EventStream):
        if history.n_nodes != n_nodes:
            raise HawkesError(
                f"{name} has n_nodes={history.n_nodes} but the model has {n_nodes} nodes; "
                "use a model and a stream over the same nodes"
            )
        return history.times, history.nodes, history.start_time
    try:
        times, nodes = history
    except (TypeError, ValueError):
        raise HawkesError(
            f"{name} must be an EventStream, a (times, nodes) pair or None, got {type(history).__name__}"
        ) from None
    times = np.asarray(times, dtype=float)
    end = float(times.max()) if times.size and np.all(np.isfinite(times)) else 0.0
    stream = EventStream(times, nodes, n_nodes, end)
    return stream.times, stream.nodes, 0.0
