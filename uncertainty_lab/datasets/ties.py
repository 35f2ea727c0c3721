"""Ties in coarse timestamps: several events of one node at the same time (GDELT stamps every row of a 15-minute
export with one time), broken deterministically, with a report of how many were tied and how far times moved.

With ``how="spread"`` the k-th of n tied events (k = 0..n-1) moves from t to t + k·w/n, where
w = min(window, the gap to that node's next distinct time): spacing the loader invents, which a Hawkes fit reads
as real when its decay time 1/β is not much longer than w (see :meth:`TieReport.decay_warning`).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import TypeVar

__all__ = ["TIES", "TieReport", "break_ties"]

#: How ties are broken: moved apart within the window, merged into the first, or kept as they are.
TIES = ("spread", "merge", "keep")

T = TypeVar("T")


@dataclass(frozen=True)
class TieReport:
    """What tie-breaking did: ``n_tied`` events shared their node and time with another (``n_groups`` such
    groups); ``n_moved`` were moved (``"spread"``) by up to ``max_shift_hours`` (mean ``mean_shift_hours`` over
    those moved), ``n_dropped`` merged away (``"merge"``); ``window_hours`` is the window ties were spread over."""

    how: str = "spread"
    window_hours: float = 0.25
    n_groups: int = 0
    n_tied: int = 0
    n_moved: int = 0
    n_dropped: int = 0
    max_shift_hours: float = 0.0
    mean_shift_hours: float = 0.0

    def summary(self) -> str:
        """One line: how many events were tied and what happened to them."""
        text = f"{self.n_tied} events in {self.n_groups} same-node ties ({self.how}"
        if self.n_moved:
            text += f": {self.n_moved} moved by up to {self.max_shift_hours:.4g} h (mean {self.mean_shift_hours:.4g} h)"
            text += f" within a {self.window_hours:.4g} h window"
        if self.n_dropped:
            text += f": {self.n_dropped} merged away"
        return text + ")"

    def decay_warning(self, beta: float, *, factor: float = 10.0) -> str | None:
        """A warning when an exponential kernel's decay time 1/β (hours) is within ``factor`` × the spread window,
        so the fitted β reflects the spacing the loader invented rather than the news; ``None`` otherwise."""
        if not self.n_moved or beta <= 0 or 1.0 / beta > factor * self.window_hours:
            return None
        return (f"beta = {beta:.4g} per hour (decay time {1.0 / beta:.3g} h) sits at the scale of the tie window "
                f"({self.window_hours:.3g} h): {self.n_moved} tied events were spread over it by the loader, so the "
                "fit reads invented spacing; bin the events coarser (bin_hours) or fit on ties='merge'")


def break_ties(
    timed: Sequence[tuple[float, T]],
    how: str,
    window: float,
    *,
    node: Callable[[T], Hashable],
    order: Callable[[T], tuple],
) -> tuple[list[tuple[float, T]], TieReport]:
    """``(time, item)`` pairs with ties at a node broken as ``how`` says, sorted by time, and the report.

    ``node(item)`` is the item's node; ``order(item)`` orders tied items (e.g. original time, URL, file line).
    """
    if how not in TIES:
        raise ValueError(f"ties must be one of {', '.join(map(repr, TIES))}, got {how!r}")
    by_node: dict[Hashable, list[tuple[float, T]]] = {}
    for t, item in timed:
        by_node.setdefault(node(item), []).append((t, item))
    out: list[tuple[float, T]] = []
    shifts: list[float] = []
    n_groups = n_tied = n_dropped = 0
    for items in by_node.values():
        items.sort(key=lambda ti: (ti[0], order(ti[1])))
        distinct = sorted({t for t, _ in items})
        nxt = dict(zip(distinct, distinct[1:] + [None], strict=True))
        for group in _groups(items):
            t, n = group[0][0], len(group)
            if n > 1:
                n_groups, n_tied = n_groups + 1, n_tied + n
            if n == 1 or how == "keep":
                out.extend(group)
            elif how == "merge":
                out.append(group[0])
                n_dropped += n - 1
            else:
                w = min(window, nxt[t] - t) if nxt[t] is not None else window
                out.extend((t + k * w / n, item) for k, (_, item) in enumerate(group))
                shifts.extend(k * w / n for k in range(1, n))
    out.sort(key=lambda ti: (ti[0], order(ti[1])))
    report = TieReport(how=how, window_hours=window, n_groups=n_groups, n_tied=n_tied, n_moved=len(shifts),
                       n_dropped=n_dropped, max_shift_hours=max(shifts, default=0.0),
                       mean_shift_hours=sum(shifts) / len(shifts) if shifts else 0.0)
    return out, report


def _groups(items: list[tuple[float, T]]) -> list[list[tuple[float, T]]]:
    """Runs of equal times in a time-sorted list."""
    groups: list[list[tuple[float, T]]] = []
    for t, item in items:
        if groups and groups[-1][0][0] == t:
            groups[-1].append((t, item))
        else:
            groups.append([(t, item)])
    return groups
