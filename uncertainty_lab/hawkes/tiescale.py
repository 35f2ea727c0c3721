"""Whether a fitted decay reads the spacing a loader invented for tied timestamps.

GDELT stamps every row of a 15-minute export with one time; a loader that spreads n tied events of a node over a
window w (``ties="spread"``: t + k·w/n) makes bursts whose gaps are ≤ w. A fit whose decay time 1/β is within
``factor`` × w of that spacing (1/β ≤ factor·w), or whose β is the top of its grid, explains those bursts as
self-excitation: the α and ρ(G) it reports are then the loader's, not the data's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

__all__ = ["TIE_FACTOR", "tie_scale_warning"]

#: 1/β within this factor of the tie window counts as "at the scale of the window"
TIE_FACTOR = 3.0


def tie_scale_warning(beta: float | None, grid: Sequence[float], ties: Any, *, factor: float = TIE_FACTOR) -> str | None:
    """A warning when the chosen ``beta`` (per time unit of the stream) sits at the scale of the tie window of
    ``ties`` (a :class:`~uncertainty_lab.datasets.ties.TieReport`: ``n_moved`` events spread over
    ``window_hours``) — 1/β ≤ ``factor`` · window, or β the largest of a ``grid`` of several — saying what to do;
    ``None`` when no tie was spread or the decay is slower."""
    moved = int(getattr(ties, "n_moved", 0) or 0) if ties is not None else 0
    window = float(getattr(ties, "window_hours", 0.0) or 0.0) if ties is not None else 0.0
    if not moved or beta is None or not (math.isfinite(beta) and beta > 0) or window <= 0:
        return None
    reasons = []
    if 1.0 / beta <= factor * window:
        reasons.append(f"its decay time 1/β = {1.0 / beta:.3g} h is within {factor:g}× the {window:.3g} h tie window")
    if len(grid) > 1 and beta >= max(grid):
        reasons.append(f"β is the largest value of the grid {sorted(float(b) for b in grid)}")
    if not reasons:
        return None
    return (f"β = {beta:.4g} /h sits at the scale of the tie window: {' and '.join(reasons)}, and {moved} tied "
            f"events were spread over that window by the loader. The excitation the fit reports (α, ρ(G)) is "
            "then the loader's, not the data's: load with ties='merge', bin the times coarser (bin_hours larger "
            "than the window), or use data with real publication times instead of batch stamps, then fit again.")
