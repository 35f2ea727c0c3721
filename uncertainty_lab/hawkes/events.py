"""Event streams: a validated realisation D = {(τ_m, n_m)}, m = 1..M, of a multivariate point process
observed on the window [start_time, end_time] = [0, T].

Times are sorted ascending; a node never fires twice at the same instant (ties across different nodes
are allowed); node ids run 0..n_nodes-1. Input and output through CSV and JSONL need no pandas.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .errors import EventStreamError
from .ties import StreamTies, resolve_ties_recorded, stream_ties
from .validation import (
    as_float_array,
    as_node_array,
    check_events,
    check_n_nodes,
    check_node_names,
    check_scalar_time,
    check_window,
    tie_pairs,
)

__all__ = ["EventStream"]

_CSV_MAGIC = "uncertainty_lab.hawkes.EventStream"


class EventStream:
    """A validated multivariate event stream on the window [start_time, end_time].

    ``times[m]`` = τ_m (sorted, finite, start_time ≤ τ_m ≤ end_time) and ``nodes[m]`` = n_m ∈ {0..n_nodes-1}.
    ``end_time`` is the horizon T of the log-likelihood ∫_0^T λ_i(s) ds. A node may not fire twice at the same
    time (use :meth:`from_arrays` with ``ties=`` to merge or spread such ties). The arrays are read-only.

    ``start_time`` is 0 for a whole observation; a later window (e.g. the second half from :meth:`split`)
    starts where the earlier one ended, and its likelihood can be conditioned on that earlier history.

    :attr:`ties` reports the ties the stream was built from (:class:`~uncertainty_lab.hawkes.ties.StreamTies`):
    ``tie_times`` (each event's time before ties were spread), ``tie_counts`` (input events each one stands for,
    > 1 after a merge), ``tie_how`` (``"none"``, ``"merge"``, ``"spread"``) and ``tie_reason`` record them;
    :meth:`from_arrays` fills them when it handles ties, and derived streams (:meth:`split`, …) keep them.
    """

    __slots__ = ("times", "nodes", "n_nodes", "end_time", "start_time", "node_names", "_tie_times", "_tie_counts",
                 "_tie_how", "_tie_reason")

    def __init__(
        self,
        times: Any,
        nodes: Any,
        n_nodes: int,
        end_time: float,
        *,
        start_time: float = 0.0,
        node_names: Sequence[str] | None = None,
        tie_times: Any = None,
        tie_counts: Any = None,
        tie_how: str = "none",
        tie_reason: str = "",
    ):
        t = as_float_array(times, "times")
        n = as_node_array(nodes)
        if t.shape != n.shape:
            raise EventStreamError(
                f"times and nodes must have the same length, got {t.size} times and {n.size} nodes"
            )
        n_nodes = check_n_nodes(n_nodes)
        start, end = check_window(start_time, end_time)
        check_events(t, n, n_nodes, start, end)
        names = check_node_names(node_names, n_nodes)
        t = t.copy()
        n = n.copy()
        t.setflags(write=False)
        n.setflags(write=False)
        self.times, self.nodes, self.n_nodes = t, n, n_nodes
        self.end_time, self.start_time, self.node_names = end, start, names
        self._tie_times, self._tie_counts = _tie_arrays(t, tie_times, tie_counts)
        if tie_how not in ("none", "merge", "spread"):
            raise EventStreamError(f"tie_how must be 'none', 'merge' or 'spread', got {tie_how!r}")
        self._tie_how, self._tie_reason = tie_how, str(tie_reason)

    # --- construction ------------------------------------------------------------------------------

    @classmethod
    def from_arrays(
        cls,
        times: Any,
        nodes: Any = None,
        n_nodes: int | None = None,
        end_time: float | None = None,
        *,
        start_time: float = 0.0,
        node_names: Sequence[str] | None = None,
        sort: bool = False,
        ties: str = "error",
        tie_reason: str = "",
    ) -> EventStream:
        """Build a stream, inferring what is not given.

        ``nodes`` defaults to all zeros (a univariate stream) and may hold names (mapped through
        ``node_names``, or the sorted distinct names); ``n_nodes`` defaults to ``len(node_names)`` or
        max(node)+1; ``end_time`` defaults to the last event time (as tick does — pass the true horizon
        when you know it). ``sort=True`` sorts by time (stable). ``ties`` handles a node firing twice at the
        same time: ``"error"`` (default), ``"merge"`` (keep one event) or ``"spread"`` (move the k-th tied
        event to t + k·δ, with δ a fraction of the smallest gap between distinct times, so order is kept);
        either way :attr:`ties` counts them, with ``tie_reason`` (why they were handled so) in its report.
        """
        t = as_float_array(times, "times")
        if nodes is None:
            raw = np.zeros(t.size, dtype=np.int64)
        else:
            raw = np.asarray(nodes)
            if raw.ndim != 1:
                raise EventStreamError(f"nodes must be 1-D, got shape {raw.shape}")
        if raw.size and raw.dtype.kind in "USO":
            labels = [str(x) for x in raw.tolist()]
            if node_names is None:
                node_names = sorted(set(labels))
            index = {name: k for k, name in enumerate(node_names)}
            unknown = [x for x in labels if x not in index]
            if unknown:
                raise EventStreamError(
                    f"node name {unknown[0]!r} is not in node_names {list(node_names)}; add it or fix the data"
                )
            n = np.array([index[x] for x in labels], dtype=np.int64)
        else:
            n = as_node_array(raw)
        if n_nodes is None:
            n_nodes = len(node_names) if node_names is not None else (int(n.max()) + 1 if n.size else 1)
        if sort and t.size:
            order = np.argsort(t, kind="stable")
            t, n = t[order], n[order]
        if ties not in ("error", "merge", "spread"):
            raise EventStreamError(f"ties must be 'error', 'merge' or 'spread', got {ties!r}")
        record: dict[str, Any] = {}
        if (ties != "error" and t.size and np.all(np.isfinite(t)) and np.all(np.diff(t) >= 0)
                and tie_pairs(t, n) is not None):
            room = float(end_time) - float(t[-1]) if isinstance(end_time, (int, float, np.number)) else None
            t, n, tie_t, tie_c, _ = resolve_ties_recorded(t, n, ties, room)
            record = dict(tie_times=tie_t, tie_counts=tie_c, tie_how=ties,
                          tie_reason=tie_reason or f"EventStream.from_arrays(ties={ties!r})")
        if end_time is None:
            end_time = float(t.max()) if t.size and np.all(np.isfinite(t)) else float(start_time)
        return cls(t, n, n_nodes, end_time, start_time=start_time, node_names=node_names, **record)

    @classmethod
    def empty(cls, n_nodes: int, end_time: float = 0.0, **kwargs: Any) -> EventStream:
        """A stream with no events (e.g. the start of a simulation loop)."""
        return cls(np.zeros(0), np.zeros(0, dtype=np.int64), n_nodes, end_time, **kwargs)

    # --- views -------------------------------------------------------------------------------------

    def __len__(self) -> int:
        return int(self.times.size)

    @property
    def n_events(self) -> int:
        """M, the number of events."""
        return int(self.times.size)

    @property
    def duration(self) -> float:
        """end_time − start_time."""
        return self.end_time - self.start_time

    @property
    def counts(self) -> np.ndarray:
        """Events per node, shape (n_nodes,)."""
        return np.bincount(self.nodes, minlength=self.n_nodes)

    @property
    def rates(self) -> np.ndarray:
        """Empirical rates counts / duration (events per unit time, per node)."""
        d = self.duration
        return self.counts / d if d > 0 else np.full(self.n_nodes, np.nan)

    @property
    def ties(self) -> StreamTies:
        """How many events tied at a node, per node and overall, and how they were handled (merge / spread)."""
        if self._tie_times is None:  # no tie record: no node fires twice at one time (O(M), no copies)
            events = tuple(self.counts.tolist())
            distinct = 1 + int(np.count_nonzero(self.times[1:] != self.times[:-1])) if self.n_events else 0
            return StreamTies(events=events, tied=(0,) * self.n_nodes, times=events, n_distinct_times=distinct,
                              node_names=self.node_names)
        return stream_ties(self.times, self.nodes, self._tie_times, self._tie_counts, self.n_nodes,
                           how=self._tie_how, reason=self._tie_reason, node_names=self.node_names)

    def _tie_t(self) -> np.ndarray:
        """Each event's tie time (its own time without a tie record)."""
        return self.times if self._tie_times is None else self._tie_times

    def _tie_c(self) -> np.ndarray:
        """Each event's tie count (1 without a tie record)."""
        return np.ones(self.n_events, dtype=np.int64) if self._tie_counts is None else self._tie_counts

    def times_of(self, node: int) -> np.ndarray:
        """The event times of one node."""
        return self.times[self.nodes == node]

    def to_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(times, nodes) as writable copies."""
        return self.times.copy(), self.nodes.copy()

    def name_of(self, node: int) -> str:
        """The node's name, or its id as text."""
        return self.node_names[node] if self.node_names else str(node)

    def __iter__(self):
        return iter(zip(self.times.tolist(), self.nodes.tolist(), strict=True))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, EventStream):
            return NotImplemented
        return (
            self.n_nodes == other.n_nodes
            and self.end_time == other.end_time
            and self.start_time == other.start_time
            and self.node_names == other.node_names
            and np.array_equal(self.times, other.times)
            and np.array_equal(self.nodes, other.nodes)
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        names = f", node_names={list(self.node_names)}" if self.node_names else ""
        ties = self.ties if self._tie_how != "none" else None
        tied = f", tied={ties.n_tied}/{ties.n_events} ({ties.how})" if ties is not None and ties.n_tied else ""
        return (
            f"EventStream(n_events={self.n_events}, n_nodes={self.n_nodes}, "
            f"window=[{self.start_time:g}, {self.end_time:g}], counts={self.counts.tolist()}{names}{tied})"
        )

    # --- derived streams ---------------------------------------------------------------------------

    def _replace(self, times, nodes, *, tie_times=None, tie_counts=None, **kw) -> EventStream:
        """A stream with these events and this stream's settings; ``tie_times`` / ``tie_counts`` default to the
        events' own times and 1 (events with no tie history)."""
        args = dict(n_nodes=self.n_nodes, end_time=self.end_time, start_time=self.start_time,
                    node_names=self.node_names, tie_how=self._tie_how, tie_reason=self._tie_reason)
        args.update(kw)
        return EventStream(times, nodes, args.pop("n_nodes"), args.pop("end_time"), tie_times=tie_times,
                           tie_counts=tie_counts, **args)

    def split(self, at: float) -> tuple[EventStream, EventStream]:
        """(earlier, later): events with τ ≤ at on [start_time, at], and τ > at on [at, end_time].

        The later window keeps absolute times and ``start_time=at``, so its likelihood can be conditioned on
        the earlier events (``model.log_likelihood(later, history=earlier)``; ``fit_hawkes(validation=...)``).
        """
        at = check_scalar_time(at, "at")
        if not self.start_time <= at <= self.end_time:
            raise EventStreamError(
                f"split time at={at!r} is outside the window [{self.start_time}, {self.end_time}]"
            )
        k = int(np.searchsorted(self.times, at, side="right"))
        tt, tc = self._tie_times, self._tie_counts
        early = self._replace(self.times[:k], self.nodes[:k], end_time=at, tie_times=_part(tt, slice(None, k)),
                              tie_counts=_part(tc, slice(None, k)))
        late = self._replace(self.times[k:], self.nodes[k:], start_time=at, tie_times=_part(tt, slice(k, None)),
                             tie_counts=_part(tc, slice(k, None)))
        return early, late

    def concat(self, later: EventStream) -> EventStream:
        """This stream followed by ``later`` (which must start at or after this one's end_time)."""
        if not isinstance(later, EventStream):
            raise EventStreamError(f"later must be an EventStream, got {type(later).__name__}")
        if later.n_nodes != self.n_nodes:
            raise EventStreamError(f"n_nodes differ: {self.n_nodes} vs later.n_nodes={later.n_nodes}")
        if later.start_time < self.end_time:
            raise EventStreamError(
                f"later.start_time={later.start_time} is before end_time={self.end_time}; concat joins a stream "
                "to its continuation (use EventStream.split to make one)"
            )
        record = self._tie_times is not None or later._tie_times is not None
        return self._replace(
            np.concatenate([self.times, later.times]), np.concatenate([self.nodes, later.nodes]),
            end_time=later.end_time,
            tie_times=np.concatenate([self._tie_t(), later._tie_t()]) if record else None,
            tie_counts=np.concatenate([self._tie_c(), later._tie_c()]) if record else None,
        )

    def append(self, time: float, node: int) -> EventStream:
        """A new stream with one more event (τ, n) at the end; end_time grows to τ if needed."""
        time = float(time)
        return self._replace(
            np.append(self.times, time), np.append(self.nodes, int(node)), end_time=max(self.end_time, time),
            tie_times=None if self._tie_times is None else np.append(self._tie_times, time),
            tie_counts=None if self._tie_counts is None else np.append(self._tie_counts, 1),
        )

    # --- files -------------------------------------------------------------------------------------

    def _meta(self) -> dict[str, Any]:
        meta: dict[str, Any] = {"n_nodes": self.n_nodes, "end_time": self.end_time, "start_time": self.start_time}
        if self.node_names:
            meta["node_names"] = list(self.node_names)
        if self._tie_how != "none":
            meta["tie_how"], meta["tie_reason"] = self._tie_how, self._tie_reason
        return meta

    def _rows(self):
        """(time, node) per event, with (tie time, tie count) when the stream has a tie record."""
        cols = [self.times.tolist(), self.nodes.tolist()]
        if self._tie_how != "none":
            cols += [self._tie_t().tolist(), self._tie_c().tolist()]
        return zip(*cols, strict=True)

    def to_csv(self, path: str | Path) -> Path:
        """Write ``time,node`` rows (and ``tie_time,tie_count`` when ties were handled), with the window, node names
        and tie handling in ``#`` comment lines first."""
        path = Path(path)
        with open(path, "w", newline="", encoding="utf-8") as f:
            f.write(f"# {_CSV_MAGIC}\n")
            for key, value in self._meta().items():
                f.write(f"# {key}={json.dumps(value)}\n")
            writer = csv.writer(f)
            writer.writerow(["time", "node"] + (["tie_time", "tie_count"] if self._tie_how != "none" else []))
            for row in self._rows():
                writer.writerow([repr(row[0]), *row[1:2], *([repr(row[2]), row[3]] if len(row) > 2 else [])])
        return path

    @classmethod
    def from_csv(cls, path: str | Path, **overrides: Any) -> EventStream:
        """Read a CSV with ``time`` and ``node`` columns (a node may be an id or a name).

        ``# key=value`` comment lines written by :meth:`to_csv` give n_nodes, end_time, start_time and
        node_names; keyword arguments override them (e.g. ``end_time=`` for a CSV from elsewhere).
        """
        path = Path(path)
        meta: dict[str, Any] = {}
        times: list[float] = []
        nodes: list[str] = []
        ties: list[tuple[float, int]] = []
        with open(path, newline="", encoding="utf-8") as f:
            lines = []
            for line in f:
                if line.startswith("#"):
                    body = line[1:].strip()
                    if "=" in body:
                        key, _, value = body.partition("=")
                        try:
                            meta[key.strip()] = json.loads(value)
                        except json.JSONDecodeError:
                            meta[key.strip()] = value.strip()
                    continue
                if line.strip():
                    lines.append(line)
        reader = csv.DictReader(lines)
        fields = [c.strip() for c in (reader.fieldnames or [])]
        if "time" not in fields:
            raise EventStreamError(f"{path}: no 'time' column (columns: {fields}); the header must name 'time'")
        reader.fieldnames = fields
        for row_no, row in enumerate(reader, start=2):
            try:
                times.append(float(row["time"]))
            except (TypeError, ValueError):
                raise EventStreamError(f"{path} row {row_no}: time {row['time']!r} is not a number") from None
            nodes.append((row.get("node") or "0").strip())
            if "tie_time" in fields:
                ties.append(_tie_of(row, f"{path} row {row_no}"))
        return cls._from_records(times, nodes, meta, overrides, str(path), ties)

    def to_jsonl(self, path: str | Path) -> Path:
        """Write a first line with the window, node names and tie handling, then one ``{"time", "node"}`` object
        per line (with ``"tie_time", "tie_count"`` when ties were handled)."""
        path = Path(path)
        keys = ("time", "node", "tie_time", "tie_count")
        with open(path, "w", encoding="utf-8") as f:
            f.write(json.dumps(self._meta()) + "\n")
            for row in self._rows():
                f.write(json.dumps(dict(zip(keys, row, strict=False))) + "\n")
        return path

    @classmethod
    def from_jsonl(cls, path: str | Path, **overrides: Any) -> EventStream:
        """Read JSON lines: objects with ``time`` (and ``node``, an id or a name) are events; an object
        without ``time`` holds n_nodes / end_time / start_time / node_names. Keyword arguments override."""
        path = Path(path)
        meta: dict[str, Any] = {}
        times: list[float] = []
        nodes: list[Any] = []
        ties: list[tuple[float, int]] = []
        with open(path, encoding="utf-8") as f:
            for line_no, line in enumerate(f, start=1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise EventStreamError(f"{path} line {line_no}: not JSON ({exc})") from None
                if not isinstance(obj, dict):
                    raise EventStreamError(f"{path} line {line_no}: expected a JSON object, got {obj!r}")
                if "time" in obj:
                    try:
                        times.append(float(obj["time"]))
                    except (TypeError, ValueError):
                        raise EventStreamError(
                            f"{path} line {line_no}: time {obj['time']!r} is not a number"
                        ) from None
                    nodes.append(obj.get("node", 0))
                    if "tie_time" in obj:
                        ties.append(_tie_of(obj, f"{path} line {line_no}"))
                else:
                    meta.update(obj)
        return cls._from_records(times, [str(x) for x in nodes], meta, overrides, str(path), ties)

    @classmethod
    def _from_records(cls, times, nodes, meta, overrides, where, ties=()) -> EventStream:
        meta = {**meta, **overrides}
        names = meta.get("node_names")
        if all(_is_int_text(x) for x in nodes):
            node_values: Any = np.array([int(x) for x in nodes], dtype=np.int64)
        else:
            node_values = np.array(nodes, dtype=object)
        try:
            stream = cls.from_arrays(
                times, node_values, n_nodes=meta.get("n_nodes"), end_time=meta.get("end_time"),
                start_time=meta.get("start_time", 0.0), node_names=names,
                sort=bool(meta.get("sort", False)), ties=meta.get("ties", "error"),
            )
            if not ties or stream._tie_how != "none":  # no tie record in the file, or ties handled on reading
                return stream
            if len(ties) != len(times) or stream.n_events != len(times) or meta.get("sort"):
                raise EventStreamError("tie_time / tie_count must be given for every event, in time order")
            return stream._replace(stream.times, stream.nodes, tie_times=[t for t, _ in ties],
                                   tie_counts=[c for _, c in ties], tie_how=meta.get("tie_how", "spread"),
                                   tie_reason=str(meta.get("tie_reason", f"read from {where}")))
        except EventStreamError as exc:
            raise EventStreamError(f"{where}: {exc}") from None


def _part(values: np.ndarray | None, part: slice) -> np.ndarray | None:
    """A slice of a tie array (None, no tie record, stays None)."""
    return None if values is None else values[part]


def _tie_of(record: dict[str, Any], where: str) -> tuple[float, int]:
    """(tie time, tie count) of one event record of a file."""
    try:
        return float(record["tie_time"]), int(record.get("tie_count") or 1)
    except (TypeError, ValueError):
        raise EventStreamError(f"{where}: tie_time {record.get('tie_time')!r} / tie_count "
                               f"{record.get('tie_count')!r} are not numbers") from None


def _tie_arrays(t: np.ndarray, tie_times: Any, tie_counts: Any) -> tuple[np.ndarray, np.ndarray]:
    """Each event's tie time (default: its time) and tie count (default 1), checked and read-only; (None, None)
    when neither is given (no tie record: nothing is copied)."""
    if tie_times is None and tie_counts is None:
        return None, None
    tt = t if tie_times is None else as_float_array(tie_times, "tie_times")
    tc = np.ones(t.size, dtype=np.int64) if tie_counts is None else np.asarray(tie_counts, dtype=np.int64)
    if tt.shape != t.shape or tc.shape != t.shape:
        raise EventStreamError(f"tie_times and tie_counts must have one entry per event ({t.size}), got "
                               f"{tt.size} and {tc.size}")
    if tc.size and tc.min() < 1:
        raise EventStreamError("tie_counts must be >= 1: the number of input events each event stands for")
    tt, tc = tt.copy(), tc.copy()
    tt.setflags(write=False)
    tc.setflags(write=False)
    return tt, tc


def _is_int_text(x: str) -> bool:
    x = x.strip()
    return x.isdigit() or (x.startswith("-") and x[1:].isdigit())
