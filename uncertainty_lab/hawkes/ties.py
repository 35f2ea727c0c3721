"""Ties in an event stream: how many events shared their node's time with another before the stream was built,
per node and overall, how they were handled (merged / spread / none), and what that leaves of the timing.

A stream keeps, for each event, its **tie time** (the time it had before ties were spread: equal within a tie
group) and its **tie count** (how many input events it stands for: n for the one event a merge of n kept).
From these :class:`StreamTies` counts, per node i:

- ``events[i]`` = Σ tie counts (events of i as they came in), ``tied[i]`` = the events of i in a group of ≥ 2 at
  one tie time, ``times[i]`` = the distinct tie times of i;
- i has **no timing information** when ``events[i] ≥ 2`` and ``times[i] = 1``: every inter-event time of i is
  0 in the data, so any spacing the stream shows was invented by the spreading (and a merge leaves one event).

A Hawkes fit reads excitation from the gaps between events; on an untimed source the gaps are the loader's, so
:func:`~uncertainty_lab.hawkes.fit_hawkes` sets its α to 0 and says why (:func:`tie_warning`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .validation import tie_pairs

__all__ = ["StreamTies", "resolve_ties_recorded", "stream_ties", "tie_warning", "timing_note"]


@dataclass(frozen=True)
class StreamTies:
    """The tie report of an :class:`~uncertainty_lab.hawkes.EventStream` (see the module docstring).

    ``how``: ``"none"`` (no tie was handled), ``"merge"`` or ``"spread"``; ``reason``: who handled them and why;
    ``n_dropped`` events were merged away, ``n_moved`` moved by the spreading."""

    how: str = "none"
    reason: str = ""
    events: tuple[int, ...] = ()
    tied: tuple[int, ...] = ()
    times: tuple[int, ...] = ()
    n_moved: int = 0
    n_dropped: int = 0
    n_distinct_times: int = 0
    node_names: tuple[str, ...] | None = field(default=None, repr=False)

    @property
    def n_events(self) -> int:
        """Events as they came in (before a merge dropped any)."""
        return int(sum(self.events))

    @property
    def n_tied(self) -> int:
        """Events that shared their node and time with another one."""
        return int(sum(self.tied))

    @property
    def share(self) -> float:
        """n_tied / n_events (0 for an empty stream)."""
        return self.n_tied / self.n_events if self.n_events else 0.0

    @property
    def untimed_nodes(self) -> tuple[int, ...]:
        """Nodes with ≥ 2 events, all at one time: no inter-event time of theirs is in the data."""
        return tuple(i for i, (m, d) in enumerate(zip(self.events, self.times, strict=True)) if m >= 2 and d == 1)

    @property
    def untimed(self) -> bool:
        """The whole stream: ≥ 2 events, all at one time (no timing information at all)."""
        return self.n_events >= 2 and self.n_distinct_times == 1

    def name(self, node: int) -> str:
        return self.node_names[node] if self.node_names else str(node)

    def summary(self) -> str:
        """One line: how many events tied, per node, and what was done with them."""
        if not self.n_tied:
            return f"no ties: every event of a node has its own time ({self.n_events} events)"
        per = ", ".join(f"{self.name(i)} {t}/{m}" for i, (t, m) in enumerate(zip(self.tied, self.events, strict=True))
                        if t)
        done = {"merge": f"merged ({self.n_dropped} dropped)", "spread": f"spread ({self.n_moved} moved)",
                "none": "not handled"}.get(self.how, self.how)
        text = (f"{self.n_tied} of {self.n_events} events ({self.share:.0%}) tied with another event of their node at "
                f"the same time (per node, tied/all: {per}); {done}")
        return text + (f": {self.reason}" if self.reason else "")


def stream_ties(times: np.ndarray, nodes: np.ndarray, tie_times: np.ndarray, tie_counts: np.ndarray, n_nodes: int, *,
                how: str = "none", reason: str = "", node_names=None) -> StreamTies:
    """Count ties per node from each event's time, tie time and tie count (the module docstring's definitions);
    an event whose time is not its tie time was moved."""
    n_moved = int((times != tie_times).sum())
    events = np.bincount(nodes, weights=tie_counts, minlength=n_nodes).astype(int)
    tied, distinct = np.zeros(n_nodes, dtype=int), np.zeros(n_nodes, dtype=int)
    if nodes.size:
        keys, inverse = np.unique(np.stack([nodes, tie_times]), axis=1, return_inverse=True)
        size = np.bincount(inverse.ravel(), weights=tie_counts).astype(int)
        key_nodes = keys[0].astype(int)
        distinct = np.bincount(key_nodes, minlength=n_nodes)
        tied = np.bincount(key_nodes, weights=np.where(size > 1, size, 0), minlength=n_nodes).astype(int)
    dropped = int(tie_counts.sum()) - int(nodes.size)
    return StreamTies(how=how if (tied.any() or dropped) else "none", reason=reason, events=tuple(events.tolist()),
                      tied=tuple(tied.tolist()), times=tuple(distinct.tolist()), n_moved=n_moved, n_dropped=dropped,
                      n_distinct_times=int(np.unique(tie_times).size), node_names=node_names)


def resolve_ties_recorded(t: np.ndarray, n: np.ndarray, how: str, room: float | None = None):
    """``(times, nodes, tie_times, tie_counts, n_moved)`` of a sorted stream with no node firing twice at one time:
    ``how="merge"`` keeps the first event of each tie (its count = the tie's size), ``"spread"`` moves the k-th
    tied event to t + k·δ, δ = (smallest gap between distinct times) / (largest tie + 1), so order is kept; with
    one distinct time the gap is ``room`` (the time left before the window's end) when > 0, else 1."""
    if tie_pairs(t, n) is None:
        return t, n, t, np.ones(t.size, dtype=np.int64), 0
    order = np.lexsort((n, t))
    ts, ns = t[order], n[order]
    first = np.ones(ts.size, dtype=bool)
    first[1:] = (np.diff(ts) != 0) | (np.diff(ns) != 0)
    group_start = np.maximum.accumulate(np.where(first, np.arange(ts.size), 0))
    if how == "merge":
        counts = np.bincount(group_start, minlength=ts.size)[first]
        keep = order[first]
        back = np.argsort(keep, kind="stable")
        return t[keep[back]], n[keep[back]], t[keep[back]], counts[back], 0
    rank = np.arange(ts.size) - group_start
    distinct = np.unique(ts)
    gap = np.diff(distinct).min() if distinct.size > 1 else (room if room is not None and room > 0 else 1.0)
    moved = ts + rank * (gap / (rank.max() + 2))
    order2 = np.argsort(moved, kind="stable")
    return moved[order2], ns[order2], ts[order2], np.ones(ts.size, dtype=np.int64), int((rank > 0).sum())


def tie_warning(ties: StreamTies | None, untimed_sources: tuple[int, ...], beta_note: str) -> str | None:
    """The one warning a fit gives about ties: the share tied, what was done, the sources whose α was set to 0 for
    want of timing information, and whether β is undetermined; None when nothing tied and nothing was set."""
    if ties is None or (not ties.n_tied and not ties.n_dropped and not untimed_sources):
        return None
    parts = [f"ties: {ties.summary()}."]
    if ties.untimed:
        parts.append(f"All {ties.n_events} events are at one time: the stream has no timing information, so the "
                     "fit reports no excitation (α = 0).")
    elif untimed_sources:
        names = ", ".join(ties.name(j) for j in untimed_sources)
        parts.append(f"Node(s) {names} have all their events at one time: no inter-event time of theirs is in the "
                     "data, so their α (as sources) is set to 0, not fitted to the spacing the tie handling made.")
    elif ties.how == "spread":
        parts.append("The spread events' gaps were invented: excitation between them is the spreading's, not the "
                     "data's; compare a fit on ties='merge'.")
    if beta_note:
        parts.append(beta_note)
    return " ".join(parts)


def timing_note(ties: StreamTies, untimed: tuple[int, ...]) -> str:
    """Which sources have no timing information, and what the fit did about it ("" when none)."""
    if not untimed:
        return ""
    if ties.untimed:
        return f"all {ties.n_events} events are at one time; α = 0 for every source (not fitted)"
    names = ", ".join(ties.name(j) for j in untimed)
    return f"every event of {names} is at one time; α from {'it' if len(untimed) == 1 else 'them'} = 0 (not fitted)"
