"""What makes event data a valid stream: the arrays, the window, order, node ids, names, and ties.

A stream is sorted ascending, finite, inside its window [start_time, end_time] with 0 <= start_time, and no
node fires twice at the same instant (ties across different nodes are allowed). Each check raises an
:class:`EventStreamError` that names the offending event and the fix.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .errors import EventStreamError

__all__ = [
    "as_float_array",
    "as_node_array",
    "check_events",
    "check_n_nodes",
    "check_node_names",
    "check_scalar_time",
    "check_window",
    "resolve_ties",
    "tie_pairs",
]


def as_float_array(values: Any, name: str) -> np.ndarray:
    """A 1-D float array, or an error naming ``name``."""
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise EventStreamError(f"{name} must be numbers (a 1-D array of floats): {exc}") from None
    if arr.ndim != 1:
        raise EventStreamError(f"{name} must be 1-D, got shape {arr.shape}; pass a flat list or array")
    return arr


def as_node_array(values: Any, name: str = "nodes") -> np.ndarray:
    """A 1-D int64 array of node ids (integers, or floats that are whole numbers), or an error naming ``name``."""
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise EventStreamError(f"{name} must be 1-D, got shape {arr.shape}; pass a flat list or array")
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64)
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64)
    if arr.dtype.kind == "b":
        raise EventStreamError(f"{name} must be integer node ids, got booleans")
    if arr.dtype.kind == "f":
        bad = ~np.isfinite(arr) | (arr != np.round(arr))
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            raise EventStreamError(
                f"{name}[{k}] = {arr[k].item()!r} is not an integer node id; node ids are 0..n_nodes-1 "
                "(map names to ids, or pass node_names= to EventStream.from_arrays)"
            )
        return arr.astype(np.int64)
    raise EventStreamError(
        f"{name} must be integer node ids, got dtype {arr.dtype}; to use names, call "
        "EventStream.from_arrays(times, names, node_names=[...])"
    )


def check_scalar_time(value: Any, name: str) -> float:
    """A finite time as a float, or an error naming ``name``."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise EventStreamError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(x):
        raise EventStreamError(f"{name} must be finite, got {x!r}; pass the end of the observation window")
    return x


def check_n_nodes(n_nodes: Any) -> int:
    """The number of nodes, a positive integer."""
    if isinstance(n_nodes, bool) or not isinstance(n_nodes, (int, np.integer)) or n_nodes < 1:
        raise EventStreamError(f"n_nodes must be a positive integer, got {n_nodes!r}")
    return int(n_nodes)


def check_window(start_time: Any, end_time: Any) -> tuple[float, float]:
    """The observation window (start, end): finite, 0 <= start <= end."""
    start = check_scalar_time(start_time, "start_time")
    end = check_scalar_time(end_time, "end_time")
    if start < 0:
        raise EventStreamError(f"start_time must be >= 0, got {start!r}; shift your clock so it starts at 0")
    if end < start:
        raise EventStreamError(f"end_time={end!r} is before start_time={start!r}; pass end_time >= start_time")
    return start, end


def check_events(t: np.ndarray, n: np.ndarray, n_nodes: int, start: float, end: float) -> None:
    """Times finite, inside [start, end] and sorted; node ids in 0..n_nodes-1; no node firing twice at once."""
    bad = ~np.isfinite(t)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise EventStreamError(
            f"times[{k}] is {float(t[k])!r}; every event time must be finite: drop or fix that event"
        )
    if t.size:
        if t.min() < 0:
            k = int(np.argmin(t))
            raise EventStreamError(
                f"times[{k}] = {float(t[k])!r} is negative; Hawkes times are measured from 0: shift the clock, "
                "e.g. times - times.min()"
            )
        if t.min() < start:
            k = int(np.argmin(t))
            raise EventStreamError(
                f"times[{k}] = {float(t[k])!r} is before start_time={start!r}; pass an earlier start_time or "
                "drop the earlier events"
            )
        if t.max() > end:
            k = int(np.argmax(t))
            raise EventStreamError(
                f"times[{k}] = {float(t[k])!r} is after end_time={end!r}; pass end_time >= {float(t.max())!r} or drop "
                "the later events"
            )
        down = np.flatnonzero(np.diff(t) < 0)
        if down.size:
            k = int(down[0]) + 1
            raise EventStreamError(
                f"times must be sorted ascending, but times[{k}] = {float(t[k])!r} < times[{k - 1}] = {float(t[k - 1])!r}; "
                "sort the events first, e.g. EventStream.from_arrays(times, nodes, sort=True)"
            )
        if n.min() < 0 or n.max() >= n_nodes:
            k = int(np.flatnonzero((n < 0) | (n >= n_nodes))[0])
            raise EventStreamError(
                f"nodes[{k}] = {int(n[k])} is out of range for n_nodes={n_nodes}; node ids run "
                f"0..{n_nodes - 1}: pass n_nodes={max(int(n.max()) + 1, n_nodes)} or remap the ids"
            )
        dup = tie_pairs(t, n)
        if dup is not None:
            a, b = dup
            raise EventStreamError(
                f"events {a} and {b} are both at node {int(n[a])} at time {float(t[a])!r}; a node cannot fire twice "
                "at the same instant (coarse timestamps?): pass ties='merge' (keep one) or ties='spread' "
                "(space them apart) to EventStream.from_arrays"
            )


def check_node_names(node_names: Any, n_nodes: int) -> tuple[str, ...] | None:
    """One distinct name per node (as strings), or None."""
    names = None
    if node_names is not None:
        names = tuple(str(x) for x in node_names)
        if len(names) != n_nodes:
            raise EventStreamError(
                f"node_names has {len(names)} names but n_nodes={n_nodes}; give one name per node"
            )
        if len(set(names)) != len(names):
            raise EventStreamError(f"node_names must be distinct, got {list(names)}")
    return names


def tie_pairs(t: np.ndarray, n: np.ndarray) -> tuple[int, int] | None:
    """The first pair of events at the same node and time in a sorted stream, or None."""
    same = np.flatnonzero(np.diff(t) == 0)
    if not same.size:
        return None
    order = np.lexsort((n, t))
    ts, ns = t[order], n[order]
    hit = np.flatnonzero((np.diff(ts) == 0) & (np.diff(ns) == 0))
    if not hit.size:
        return None
    a, b = sorted((int(order[hit[0]]), int(order[hit[0] + 1])))
    return a, b


def resolve_ties(t: np.ndarray, n: np.ndarray, how: str) -> tuple[np.ndarray, np.ndarray]:
    """A sorted stream with no node firing twice at one time: ``how="merge"`` keeps one event of each tie,
    ``"spread"`` moves the k-th tied event to t + k·δ (δ a fraction of the smallest gap, so order is kept)."""
    if tie_pairs(t, n) is None:
        return t, n
    order = np.lexsort((n, t))
    ts, ns = t[order], n[order]
    first = np.ones(ts.size, dtype=bool)
    first[1:] = (np.diff(ts) != 0) | (np.diff(ns) != 0)
    if how == "merge":
        keep = np.sort(order[first])
        return t[keep], n[keep]
    # spread: the k-th duplicate at (t, node) moves to t + k·δ, δ small enough to stay before the next time
    group_start = np.maximum.accumulate(np.where(first, np.arange(ts.size), 0))
    rank = np.arange(ts.size) - group_start
    distinct = np.unique(ts)
    gap = np.diff(distinct).min() if distinct.size > 1 else max(1.0, abs(float(ts[-1])))
    delta = gap / (rank.max() + 2)
    ts = ts + rank * delta
    order2 = np.argsort(ts, kind="stable")
    return ts[order2], ns[order2]
