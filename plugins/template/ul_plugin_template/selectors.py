"""A ``memory_selectors`` plugin: the latest event of each node.

Protocol (see ``uncertainty_lab.contracts.memory``): ``select(history, t_next, node_next, k, model=None,
rng=None) -> list[MemoryItem]``. An item is (index into the history, node, weight); only events with
τ_m < t_next are eligible (index 0, the seed, included); weights are finite, ≥ 0 and sum to 1 when the list is
not empty; items come most relevant first. The cascade loop checks every answer with ``check_memory``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
from uncertainty_lab.contracts import CascadeError, History, MemoryItem


@dataclass
class LatestPerNodeSelector:
    """The latest event of each node before τ_t, most recent first, at most k of them.

    Weights ∝ e^{−decay · age} (age = t_next − τ_m), normalised; ``age_decay = 0`` gives uniform weights.
    Like the paper's Algorithm 1 it remembers one event per node, but it ignores the Hawkes model: every
    node that has spoken counts, whether or not it excites the target. ``include_target=False`` leaves out the
    target node's own last words (memory of the others only).
    """

    name: ClassVar[str] = "latest_per_node"
    summary: ClassVar[str] = "the latest event of each node (most recent first), weights decaying with age (template)"
    reference: ClassVar[str] = "uncertainty-lab plugin template"

    age_decay: float = field(
        default=0.0,
        metadata={"min": 0.0, "max": 10.0, "step": 0.1, "help": "weights ∝ exp(−age_decay × age); 0 = uniform"},
    )
    include_target: bool = field(default=True, metadata={"help": "may the target node's own latest event be remembered?"})

    def select(self, history: History, t_next: float, node_next: int, k: int, model=None, rng=None) -> list[MemoryItem]:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise CascadeError(f"k (the memory budget) must be an integer >= 1, got {k!r}")
        latest = history.latest_before(t_next)  # checks t_next; None for a node that has not spoken
        times = history.times
        candidates = [i for j, i in enumerate(latest) if i is not None and (self.include_target or j != node_next)]
        chosen = sorted(candidates, key=lambda i: (times[i], i), reverse=True)[:k]  # most recent first
        if not chosen:
            return []
        raw = [math.exp(-self.age_decay * (float(t_next) - float(times[i]))) for i in chosen]
        total = sum(raw)
        if not total > 0:  # every weight underflowed (very old events): fall back to uniform
            raw, total = [1.0] * len(chosen), float(len(chosen))
        return [MemoryItem(int(i), history[int(i)].node, w / total) for i, w in zip(chosen, raw, strict=True)]
