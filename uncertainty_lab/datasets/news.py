"""News cascades for the HawkesLLM lab: the :class:`NewsEvent` every news loader returns, the fictional cascade
the package ships, its chronological split, and the Hawkes event stream of a list of events.

``time_h`` is in **hours** since the start of the observation window. :func:`news_event_stream` turns a list of
events into a Hawkes :class:`~uncertainty_lab.hawkes.EventStream`; :func:`chronological_split` makes the paper's
train / held-out split (198 / 50 on the shipped cascade). Real GDELT exports are read by :mod:`.gdelt`.

- :func:`load_news_cascade` — 248 headlines we wrote about *Halyard II*, a fictional crewed lunar flyby, over
  263 hours, across the five node categories :data:`NODES` (data card: ``datasets/data/news_cascade.md``;
  generator: ``python -m uncertainty_lab.datasets.build_news_cascade``).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from uncertainty_lab.datasets.files import (
    DEFAULT_MAX_BYTES,
    DatasetFormatError,
    UniqueIds,
    json_records,
    read_text,
    record_from,
)
from uncertainty_lab.datasets.subset import check_subset, take

__all__ = [
    "N_TRAIN",
    "NODES",
    "PHASES",
    "SOURCES",
    "NewsEvent",
    "chronological_split",
    "load_news_cascade",
    "news_cascade_path",
    "news_event_stream",
]

#: The five media-category nodes of the HawkesLLM case study, in node-id order (id = position).
NODES: tuple[str, ...] = (
    "local_tv",
    "mass_market",
    "specialist_science_tech",
    "business_finance",
    "general_news",
)

#: The invented outlet that writes each node's headlines in the shipped cascade.
SOURCES: dict[str, str] = {
    "local_tv": "Varrow Coast 7 News",
    "mass_market": "The Daily Blink",
    "specialist_science_tech": "Orbit & Instrument",
    "business_finance": "Ledgerline Markets",
    "general_news": "Continental Wire",
}

#: Mission phases of the shipped cascade, in time order (each event's ``phase``).
PHASES: tuple[str, ...] = (
    "prelaunch",
    "launch",
    "outbound",
    "anomaly",
    "approach",
    "flyby",
    "return",
    "splashdown",
)

#: Training events in the paper's chronological split (the remaining 50 of 248 are held out).
N_TRAIN = 198

_SHIPPED = Path(__file__).resolve().parent / "data" / "news_cascade.jsonl"
_FIELDS = ("id", "time_h", "timestamp", "node", "source", "headline", "phase", "url")
_REQUIRED = ("id", "time_h", "timestamp", "node", "source", "headline")


@dataclass(frozen=True)
class NewsEvent:
    """One headline-level event e = (τ, n, x): ``time_h`` (hours since the window start), ``node`` (a
    category name) and ``headline`` (the text).

    ``timestamp`` is the wall-clock time as ISO-8601 UTC (for GDELT rows: the GDELT timestamp itself, before
    any binning or tie-breaking moved ``time_h``); ``source`` is the outlet (shipped cascade) or the source
    domain (GDELT); ``phase`` is the mission phase (shipped cascade only); ``url`` the article (GDELT only).
    ``time`` and ``text`` are aliases of ``time_h`` and ``headline``.
    """

    id: str
    time_h: float
    timestamp: str
    node: str
    source: str
    headline: str
    phase: str | None = None
    url: str | None = None

    def __post_init__(self) -> None:
        for name in ("id", "node"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"{name} must be a non-empty string, got {value!r}")
        for name in ("timestamp", "source", "headline"):
            if not isinstance(getattr(self, name), str):
                raise ValueError(f"{name} must be a string, got {type(getattr(self, name)).__name__}")
        if isinstance(self.time_h, bool) or not isinstance(self.time_h, (int, float)):
            raise ValueError(f"time_h must be a number of hours, got {self.time_h!r}")
        if not math.isfinite(self.time_h) or self.time_h < 0:
            raise ValueError(f"time_h must be finite and >= 0 (hours since the window start), got {self.time_h!r}")
        object.__setattr__(self, "time_h", float(self.time_h))

    @property
    def time(self) -> float:
        """Alias of ``time_h`` (the event time τ in hours)."""
        return self.time_h

    @property
    def text(self) -> str:
        """Alias of ``headline`` (the event text x)."""
        return self.headline

    def to_dict(self) -> dict[str, Any]:
        """The event as a JSON-ready dict (``phase`` / ``url`` only when set); :meth:`from_dict` reads it back."""
        out = {name: getattr(self, name) for name in _REQUIRED}
        for name in ("phase", "url"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        return out

    @classmethod
    def from_dict(cls, record: Mapping[str, Any]) -> NewsEvent:
        """An event from a dict of the file schema; missing and unknown fields are errors naming them."""
        if not isinstance(record, Mapping):
            raise ValueError(f"expected a JSON object, got {type(record).__name__}")
        missing = [k for k in _REQUIRED if k not in record]
        if missing:
            raise ValueError(f"missing field(s) {', '.join(missing)}")
        unknown = sorted(set(record) - set(_FIELDS))
        if unknown:
            raise ValueError(f"unknown field(s) {', '.join(unknown)}; the schema has {', '.join(_FIELDS)}")
        return cls(**record)


# --------------------------------------------------------------------------------------------------------------
# The shipped cascade
# --------------------------------------------------------------------------------------------------------------


def news_cascade_path() -> Path:
    """Where the shipped cascade's JSONL lives inside the installed package."""
    return _SHIPPED


def load_news_cascade(
    path: str | os.PathLike[str] | None = None,
    *,
    split: str | None = None,
    limit: int | None = None,
    sample: int | None = None,
    seed: int = 0,
    max_bytes: int | None = DEFAULT_MAX_BYTES,
) -> list[NewsEvent]:
    """The news cascade the package ships: 248 headlines about the fictional Halyard II lunar flyby.

    Events come in time order (strictly increasing ``time_h``, hours since 2031-09-01T00:00Z, window [0, 263]),
    over the five :data:`NODES`, each with its mission ``phase`` (:data:`PHASES`). Everything in it was written
    and generated for this package; see ``datasets/data/news_cascade.md``. ``path`` reads a file in the same
    schema instead (JSON lines or a JSON list; e.g. one regenerated with the build script). ``split``:
    ``"train"`` (the first :data:`N_TRAIN` events) or ``"test"`` (the rest), as :func:`chronological_split`;
    then ``sample`` / ``limit`` (events stay in time order).
    """
    check_subset(limit, sample, seed)
    if split not in (None, "train", "test"):
        raise ValueError(f"split must be 'train', 'test' or None (all events), got {split!r}")
    path = Path(path) if path is not None else _SHIPPED
    events: list[NewsEvent] = []
    ids = UniqueIds(path)
    for row, record in json_records(read_text(path, max_bytes=max_bytes), path, what="news events",
                                    record_keys=_REQUIRED):
        event = record_from(NewsEvent.from_dict, record, path, row, field_of=_named_field)
        ids.add(event.id, row)
        if events and event.time_h < events[-1].time_h:
            raise DatasetFormatError(path, f"time_h {event.time_h} is before the previous event's "
                                     f"{events[-1].time_h}; events must be in time order", row=row, column="time_h")
        events.append(event)
    if split is not None:
        events = chronological_split(events)[0 if split == "train" else 1]
    return take(events, limit=limit, sample=sample, seed=seed)


def _named_field(message: str) -> str | None:
    """The field a validation message starts with or names first (``missing field(s) id`` → ``id``)."""
    words = message.replace(",", " ").split()
    if message.startswith(("missing field", "unknown field")) and len(words) > 2:
        return words[2]
    return words[0] if words and words[0] in _FIELDS else None


def chronological_split(events: Sequence[NewsEvent], n_train: int = N_TRAIN) -> tuple[list[NewsEvent], list[NewsEvent]]:
    """(train, test): the first ``n_train`` events in time order, and the rest (the paper's 198 / 50 split).

    Fit the Hawkes model on ``train`` only and use ``test`` as held-out references (no leakage). Events are
    sorted by ``time_h`` (stably) first, so the split is chronological whatever order they came in.
    """
    events = list(events)
    if isinstance(n_train, bool) or not isinstance(n_train, int):
        raise ValueError(f"n_train must be an integer number of events, got {n_train!r}")
    if not 0 < n_train < len(events):
        raise ValueError(f"n_train must be between 1 and len(events) - 1 = {len(events) - 1}, got {n_train}; "
                         "both sides of the split need at least one event")
    ordered = sorted(events, key=lambda e: e.time_h)
    return ordered[:n_train], ordered[n_train:]


def news_event_stream(
    events: Sequence[NewsEvent],
    node_names: Sequence[str] = NODES,
    *,
    end_time: float | None = None,
    start_time: float = 0.0,
    ties: str = "error",
    tie_report: Any = None,
):
    """A Hawkes :class:`~uncertainty_lab.hawkes.EventStream` of the events' (``time_h``, ``node``), in hours.

    Node ids follow ``node_names`` (default :data:`NODES`: ``local_tv`` = 0 … ``general_news`` = 4) and every
    node keeps its id even when it has no events. ``end_time`` defaults to the last event time (pass the true
    window end, e.g. 263 for the whole shipped cascade, when you know it); ``start_time`` is for a later window
    such as the held-out test events. ``ties`` is passed to :meth:`EventStream.from_arrays`.

    The stream's :attr:`~uncertainty_lab.hawkes.EventStream.ties` knows the ties a loader handled before: events
    of one node with the same source ``timestamp`` (GDELT's 15-minute stamp) are one tie, whose time before the
    loader spread it is the earliest ``time_h`` of the group. ``tie_report`` (the loader's report,
    ``load_gdelt(...).report``, or its :class:`~uncertainty_lab.datasets.ties.TieReport`) says how they were
    handled (default: the ``.report`` of a ``load_gdelt`` result); after a merge the report's ``tie_counts``
    (event id → events it stands for) restores the counts. Without a report no tie record is made.
    (Timestamps binned together by ``bin_hours`` but different are not counted as one tie here.)
    """
    from uncertainty_lab.hawkes import EventStream

    if tie_report is None:  # a load_gdelt result carries its report
        tie_report = getattr(events, "report", None)
    events = list(events)
    names = tuple(node_names)
    index = {name: k for k, name in enumerate(names)}
    unknown = sorted({e.node for e in events} - set(index))
    if unknown:
        raise ValueError(f"events have node(s) {unknown} that are not in node_names {list(names)}; pass "
                         "node_names= listing every node (e.g. sorted({e.node for e in events}))")
    events.sort(key=lambda e: e.time_h)
    times = [e.time_h for e in events]
    nodes = [index[e.node] for e in events]
    if end_time is None:
        end_time = times[-1] if times else float(start_time)
    handled = _loader_ties(events, tie_report)
    if handled is None:
        return EventStream.from_arrays(times, nodes, n_nodes=len(names), end_time=end_time, start_time=start_time,
                                       node_names=names, ties=ties)
    return EventStream(times, nodes, len(names), end_time, start_time=start_time, node_names=names, **handled)


def _loader_ties(events: list[NewsEvent], report: Any) -> dict[str, Any] | None:
    """The tie record of events whose ties a loader handled (time-sorted; ``report`` says it spread or merged
    them): each event's tie time (the earliest ``time_h`` of its node-and-timestamp group), its tie count, how and
    why; None without such a report or when nothing tied."""
    how = getattr(getattr(report, "ties_report", report), "how", None)
    if how not in ("spread", "merge"):  # no loader says it handled ties: a shared timestamp proves nothing
        return None
    first: dict[tuple[str, str], float] = {}
    for e in events:
        first.setdefault((e.node, e.timestamp), e.time_h)
    tie_times = [first[(e.node, e.timestamp)] for e in events]
    merged = getattr(report, "tie_counts", None) or {}
    tie_counts = [int(merged.get(e.id, 1)) for e in events]
    moved = any(t != e.time_h for t, e in zip(tie_times, events, strict=True))
    if not moved and max(tie_counts, default=1) == 1:
        return None
    reason = (f"by the loader (ties={how!r}): one node's events shared a source timestamp (GDELT stamps every row of "
              "a 15-minute export with one time)")
    return {"tie_times": tie_times, "tie_counts": tie_counts, "tie_how": how, "tie_reason": reason}
