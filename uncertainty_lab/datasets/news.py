"""News cascades for the HawkesLLM lab: the fictional one the package ships, and a loader for real GDELT exports.

Every loader returns a list of :class:`NewsEvent` — a timestamped headline from one media-category node —
with ``time_h`` in **hours** since the start of the observation window. :func:`news_event_stream` turns such a
list into a Hawkes :class:`~uncertainty_lab.hawkes.EventStream`, and :func:`chronological_split` makes the
paper's train / held-out split (198 / 50 on the shipped cascade).

- :func:`load_news_cascade` — 248 headlines we wrote about *Halyard II*, a fictional crewed lunar flyby, over
  263 hours, across the five node categories :data:`NODES` (data card: ``datasets/data/news_cascade.md``;
  generator: ``python -m uncertainty_lab.datasets.build_news_cascade``).
- :func:`load_gdelt` — GDELT GKG 2.1 or Events 2.0 files you downloaded yourself (tab-separated, no header;
  plain, ``.zip`` or ``.gz``), mapped to nodes by source domain, de-duplicated, optionally binned in time, with
  ties at a node broken deterministically. Nothing here touches the network.
"""

from __future__ import annotations

import gzip
import html
import io
import json
import math
import os
import re
import unicodedata
import warnings
import zipfile
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

from uncertainty_lab.datasets.qa import DatasetFormatError

__all__ = [
    "EVENTS_COLUMNS",
    "GKG_COLUMNS",
    "N_TRAIN",
    "NODES",
    "PHASES",
    "SOURCES",
    "GdeltEvents",
    "GdeltReport",
    "NewsEvent",
    "chronological_split",
    "load_gdelt",
    "load_news_cascade",
    "news_cascade_path",
    "news_event_stream",
    "normalise_domain",
    "normalise_title",
    "normalise_url",
    "title_from_url",
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
        """The event as a JSON-ready dict (``phase`` / ``url`` only when set)."""
        out = {name: getattr(self, name) for name in _REQUIRED}
        for name in ("phase", "url"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        return out


# --------------------------------------------------------------------------------------------------------------
# The shipped cascade
# --------------------------------------------------------------------------------------------------------------


def news_cascade_path() -> Path:
    """Where the shipped cascade's JSONL lives inside the installed package."""
    return _SHIPPED


def load_news_cascade(path: str | os.PathLike[str] | None = None) -> list[NewsEvent]:
    """The news cascade the package ships: 248 headlines about the fictional Halyard II lunar flyby.

    Events come in time order (strictly increasing ``time_h``, hours since 2031-09-01T00:00Z, window [0, 263]),
    over the five :data:`NODES`, each with its mission ``phase`` (:data:`PHASES`). Everything in it was written
    and generated for this package; see ``datasets/data/news_cascade.md``. ``path`` reads a file in the same
    JSONL schema instead (e.g. one regenerated with the build script).
    """
    path = Path(path) if path is not None else _SHIPPED
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise DatasetFormatError(path, f"cannot read the file ({exc.strerror or exc})") from None
    events: list[NewsEvent] = []
    seen: dict[str, int] = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        row = f"line {lineno}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetFormatError(path, f"not valid JSON ({exc.msg} at character {exc.pos + 1})", row=row) from None
        if not isinstance(record, dict):
            raise DatasetFormatError(path, f"expected a JSON object, got {type(record).__name__}", row=row)
        missing = [k for k in _REQUIRED if k not in record]
        if missing:
            raise DatasetFormatError(path, f"missing field(s) {', '.join(missing)}", row=row, column=missing[0])
        unknown = sorted(set(record) - set(_FIELDS))
        if unknown:
            raise DatasetFormatError(path, f"unknown field(s) {', '.join(unknown)}; the schema has "
                                     f"{', '.join(_FIELDS)}", row=row, column=unknown[0])
        try:
            event = NewsEvent(**record)
        except (TypeError, ValueError) as exc:
            raise DatasetFormatError(path, str(exc), row=row) from None
        if event.id in seen:
            raise DatasetFormatError(path, f"duplicate id {event.id!r} (first on line {seen[event.id]})",
                                     row=row, column="id")
        if events and event.time_h < events[-1].time_h:
            raise DatasetFormatError(path, f"time_h {event.time_h} is before the previous event's "
                                     f"{events[-1].time_h}; events must be in time order", row=row, column="time_h")
        seen[event.id] = lineno
        events.append(event)
    return events


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
):
    """A Hawkes :class:`~uncertainty_lab.hawkes.EventStream` of the events' (``time_h``, ``node``), in hours.

    Node ids follow ``node_names`` (default :data:`NODES`: ``local_tv`` = 0 … ``general_news`` = 4) and every
    node keeps its id even when it has no events. ``end_time`` defaults to the last event time (pass the true
    window end, e.g. 263 for the whole shipped cascade, when you know it); ``start_time`` is for a later window
    such as the held-out test events. ``ties`` is passed to :meth:`EventStream.from_arrays`.
    """
    from uncertainty_lab.hawkes import EventStream

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
    return EventStream.from_arrays(times, nodes, n_nodes=len(names), end_time=end_time, start_time=start_time,
                                   node_names=names, ties=ties)


# --------------------------------------------------------------------------------------------------------------
# GDELT
# --------------------------------------------------------------------------------------------------------------

#: GDELT Global Knowledge Graph 2.1 columns (tab-separated, no header), in file order.
GKG_COLUMNS: tuple[str, ...] = (
    "GKGRECORDID", "V2.1DATE", "V2SOURCECOLLECTIONIDENTIFIER", "V2SOURCECOMMONNAME", "V2DOCUMENTIDENTIFIER",
    "V1COUNTS", "V2.1COUNTS", "V1THEMES", "V2ENHANCEDTHEMES", "V1LOCATIONS", "V2ENHANCEDLOCATIONS", "V1PERSONS",
    "V2ENHANCEDPERSONS", "V1ORGANIZATIONS", "V2ENHANCEDORGANIZATIONS", "V1.5TONE", "V2.1ENHANCEDDATES", "V2GCAM",
    "V2.1SHARINGIMAGE", "V2.1RELATEDIMAGES", "V2.1SOCIALIMAGEEMBEDS", "V2.1SOCIALVIDEOEMBEDS", "V2.1QUOTATIONS",
    "V2.1ALLNAMES", "V2.1AMOUNTS", "V2.1TRANSLATIONINFO", "V2EXTRASXML",
)

#: GDELT 2.0 Events export columns (tab-separated, no header), in file order.
EVENTS_COLUMNS: tuple[str, ...] = (
    "GLOBALEVENTID", "SQLDATE", "MonthYear", "Year", "FractionDate",
    *(f"Actor{a}{f}" for a in (1, 2) for f in (
        "Code", "Name", "CountryCode", "KnownGroupCode", "EthnicCode", "Religion1Code", "Religion2Code",
        "Type1Code", "Type2Code", "Type3Code")),
    "IsRootEvent", "EventCode", "EventBaseCode", "EventRootCode", "QuadClass", "GoldsteinScale", "NumMentions",
    "NumSources", "NumArticles", "AvgTone",
    *(f"{g}Geo_{f}" for g in ("Actor1", "Actor2", "Action") for f in (
        "Type", "FullName", "CountryCode", "ADM1Code", "ADM2Code", "Lat", "Long", "FeatureID")),
    "DATEADDED", "SOURCEURL",
)

_FORMATS = {
    # format: (columns, id column, date column, domain column or None, url column, title column or None)
    "gkg": (GKG_COLUMNS, 0, 1, 3, 4, 26),
    "events": (EVENTS_COLUMNS, 0, 59, None, 60, None),
}
_TITLE_RE = re.compile(r"<PAGE_TITLE>(.*?)</PAGE_TITLE>", re.S | re.I)
_DATE_RE = re.compile(r"\d{14}")
_SLUG_EXT_RE = re.compile(r"\.(s?html?|php\d?|aspx?|jsp|cms|ece|story|amp)$", re.I)
_SLUG_SKIP = frozenset({"index", "amp", "story", "article", "articles", "news", "default", "home", "page", "print"})
_SUFFIX_SPLIT_RE = re.compile(r"\s+[|\-\u2013\u2014:]\s+")
_TRACKING_PARAMS = ("utm_", "fbclid", "gclid", "ocid", "cmpid")
_MAX_LISTED = 20


@dataclass
class GdeltReport:
    """What :func:`load_gdelt` read, kept and left out — nothing is dropped without being counted here.

    ``unmapped`` counts rows per source domain that ``domain_to_node`` does not cover; ``malformed`` lists the
    first rows skipped with ``on_error="skip"`` (file, line, why); ``n_duplicates`` counts rows dropped as the
    same URL or the same normalised title as an earlier row; ``n_off_topic`` rows matched no ``keywords``;
    ``n_ties`` events were moved (``ties="spread"``) or dropped (``"merge"``) because their node already had
    an event at that time. ``t0`` is the wall-clock time of hour 0 (the first kept event).
    """

    files: tuple[str, ...]
    format: str
    n_rows: int = 0
    n_malformed: int = 0
    malformed: list[str] = field(default_factory=list)
    n_unmapped: int = 0
    unmapped: dict[str, int] = field(default_factory=dict)
    n_off_topic: int = 0
    n_duplicates: int = 0
    n_ties: int = 0
    ties: str = "spread"
    bin_hours: float | None = None
    n_kept: int = 0
    per_node: dict[str, int] = field(default_factory=dict)
    t0: str | None = None

    def summary(self) -> str:
        """A few lines saying what was read and what happened to every row."""
        lines = [
            f"GDELT {self.format}: {self.n_rows} rows from {len(self.files)} file(s); kept {self.n_kept} events",
            f"  unmapped domains: {self.n_unmapped} rows"
            + (f" (top: {', '.join(f'{d} {n}' for d, n in list(self.unmapped.items())[:5])})" if self.unmapped else ""),
            f"  duplicates dropped: {self.n_duplicates}; off-topic: {self.n_off_topic}; malformed skipped: "
            f"{self.n_malformed}",
            f"  ties at a node ({self.ties}): {self.n_ties}; bin_hours: {self.bin_hours}",
            f"  per node: {self.per_node}; hour 0 = {self.t0}",
        ]
        return "\n".join(lines)


class GdeltEvents(list):
    """The events :func:`load_gdelt` kept (a plain ``list`` of :class:`NewsEvent`), with ``.report``."""

    report: GdeltReport

    def __init__(self, events: Iterable[NewsEvent], report: GdeltReport):
        super().__init__(events)
        self.report = report


@dataclass
class _Row:
    when: datetime
    id: str
    domain: str
    url: str
    title: str
    file_no: int
    line: int
    node: str = ""
    extras: str = ""  # GKG V2EXTRASXML, read for the headline only once the row is known to be kept


def load_gdelt(
    path: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    domain_to_node: Mapping[str, str],
    format: str = "gkg",
    bin_hours: float | None = None,
    dedupe: bool = True,
    *,
    keywords: Iterable[str] | None = None,
    ties: str = "spread",
    tie_window_hours: float | None = None,
    on_error: str = "raise",
    warn: bool = True,
) -> GdeltEvents:
    """Read GDELT files you downloaded into :class:`NewsEvent` s with hours since the first kept event.

    ``path``: one file, several (a list), or a folder (its ``.csv``/``.tsv``/``.txt``/``.zip``/``.gz`` files in
    name order). Files are GDELT's tab-separated, header-less exports, plain or as downloaded (``.zip`` / ``.gz``).

    ``format``:
      - ``"gkg"`` — Global Knowledge Graph 2.1 (27 columns, :data:`GKG_COLUMNS`): time from ``V2.1DATE``, domain
        from ``V2SOURCECOMMONNAME`` (else the URL's host), URL from ``V2DOCUMENTIDENTIFIER``, headline from
        ``<PAGE_TITLE>`` in ``V2EXTRASXML`` when present, else derived from the URL slug (:func:`title_from_url`).
      - ``"events"`` — Events 2.0 export (61 columns, :data:`EVENTS_COLUMNS`): time from ``DATEADDED``
        (column 60), URL from ``SOURCEURL`` (column 61), domain from the URL, headline from the URL slug.

    ``domain_to_node`` maps source domains to node names, e.g. ``{"example-news.com": "general_news"}``. Keys may
    be domains or URLs (``www.`` and ports are ignored); a subdomain matches its parent domain (``tv.example.com``
    → ``example.com``), the most specific key winning. Rows from other domains are counted per domain in
    ``.report.unmapped`` and, with ``warn=True``, summarised in a warning.

    ``keywords``: keep only rows whose headline or URL contains one of them (case-insensitive) — GDELT files
    hold all the world's news; the rest are counted as off-topic.

    ``dedupe``: drop a row whose URL (:func:`normalise_url`) or normalised headline (:func:`normalise_title`)
    already appeared in an earlier row (earliest kept; ties in time keep the first in file order).

    ``bin_hours``: floor each time to a grid of that many hours anchored at the first kept event.

    Ties — a node with several events at the same time (GDELT stamps rows in 15-minute batches, and binning
    makes more) — are broken deterministically: tied events are ordered by their original GDELT timestamp, then
    URL; with ``ties="spread"`` (default) the k-th of n tied events (k = 0..n-1) moves to t + k·w/n, where
    w = min(``tie_window_hours``, the gap to that node's next distinct time) and ``tie_window_hours`` defaults
    to ``bin_hours`` when binning, else 0.25 h (GDELT's update cycle) — so times stay inside the batch and
    strictly increase per node; ``ties="merge"`` keeps only the first of them; ``ties="keep"`` leaves them
    (then pass ``ties=`` to :func:`news_event_stream`). Each event's ``timestamp`` keeps the GDELT time.

    ``on_error``: ``"raise"`` (default) stops at the first malformed row with an error naming the file, line
    and column; ``"skip"`` skips such rows and counts them in ``.report``.

    Returns a :class:`GdeltEvents` list in time order, with ``.report`` (:class:`GdeltReport`).
    """
    if format not in _FORMATS:
        raise ValueError(f"format must be 'gkg' (GKG 2.1) or 'events' (Events 2.0 export), got {format!r}")
    if ties not in ("spread", "merge", "keep"):
        raise ValueError(f"ties must be 'spread', 'merge' or 'keep', got {ties!r}")
    if on_error not in ("raise", "skip"):
        raise ValueError(f"on_error must be 'raise' or 'skip', got {on_error!r}")
    bin_hours = _positive_or_none(bin_hours, "bin_hours")
    tie_window_hours = _positive_or_none(tie_window_hours, "tie_window_hours")
    if tie_window_hours is None:
        tie_window_hours = bin_hours if bin_hours is not None else 0.25
    mapping = _check_mapping(domain_to_node)
    words = None
    if keywords is not None:
        if isinstance(keywords, str):
            keywords = [keywords]
        words = [str(w).casefold() for w in keywords if str(w).strip()]
        if not words:
            raise ValueError("keywords must hold at least one non-empty word (or pass keywords=None)")

    files = _expand_paths(path)
    report = GdeltReport(files=tuple(str(f) for f in files), format=format, ties=ties, bin_hours=bin_hours)
    unmapped: Counter[str] = Counter()
    rows: list[_Row] = []
    for file_no, file in enumerate(files):
        for where, lineno, line in _read_lines(file):
            report.n_rows += 1
            try:
                row = _parse_row(line, format, where, lineno, file_no)
            except DatasetFormatError as exc:
                if on_error == "raise":
                    raise
                report.n_malformed += 1
                if len(report.malformed) < _MAX_LISTED:
                    report.malformed.append(str(exc))
                continue
            node = _lookup(row.domain, mapping)
            if node is None:
                unmapped[row.domain or "(no domain)"] += 1
                continue
            row.title, row.extras = _headline(row.extras, row.url), ""
            if words is not None:
                hay = f"{row.title} {row.url}".casefold()
                if not any(w in hay for w in words):
                    report.n_off_topic += 1
                    continue
            row.node = node
            rows.append(row)
    report.n_unmapped = sum(unmapped.values())
    report.unmapped = dict(sorted(unmapped.items(), key=lambda kv: (-kv[1], kv[0])))

    rows.sort(key=lambda r: (r.when, r.file_no, r.line))
    if dedupe:
        rows, report.n_duplicates = _dedupe(rows)
    events: list[NewsEvent] = []
    if rows:
        t0 = rows[0].when
        report.t0 = _iso(t0)
        hours = [(r.when - t0).total_seconds() / 3600.0 for r in rows]
        if bin_hours is not None:
            hours = [math.floor(h / bin_hours + 1e-9) * bin_hours for h in hours]
        timed, report.n_ties = _break_ties(list(zip(hours, rows, strict=True)), ties, tie_window_hours)
        for h, r in timed:
            events.append(NewsEvent(id=r.id, time_h=h, timestamp=_iso(r.when), node=r.node, source=r.domain,
                                    headline=r.title or r.url, url=r.url))
    report.n_kept = len(events)
    report.per_node = dict(sorted(Counter(e.node for e in events).items()))
    if warn and report.n_unmapped:
        top = ", ".join(f"{d} ({n})" for d, n in list(report.unmapped.items())[:5])
        warnings.warn(
            f"load_gdelt: {report.n_unmapped} of {report.n_rows} rows came from domains not in domain_to_node and "
            f"were left out (most common: {top}); see .report.unmapped, or add those domains to the mapping",
            UserWarning, stacklevel=2,
        )
    return GdeltEvents(events, report)


def _positive_or_none(value, name: str) -> float | None:
    if value is None:
        return None
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a positive number of hours or None, got {value!r}") from None
    if isinstance(value, bool) or not math.isfinite(x) or x <= 0:
        raise ValueError(f"{name} must be a positive number of hours or None, got {value!r}")
    return x


def _check_mapping(domain_to_node) -> dict[str, str]:
    if not isinstance(domain_to_node, Mapping) or not domain_to_node:
        raise ValueError("domain_to_node must be a non-empty dict mapping source domains to node names, e.g. "
                         "{'example-news.com': 'general_news'}")
    out: dict[str, str] = {}
    for key, node in domain_to_node.items():
        if not isinstance(key, str) or not normalise_domain(key):
            raise ValueError(f"domain_to_node: key {key!r} is not a domain; use e.g. 'example-news.com'")
        if not isinstance(node, str) or not node.strip():
            raise ValueError(f"domain_to_node[{key!r}] must be a node name (a non-empty string), got {node!r}")
        d = normalise_domain(key)
        if d in out and out[d] != node:
            raise ValueError(f"domain_to_node maps {d!r} to both {out[d]!r} and {node!r} "
                             f"(keys differing only by scheme/www./port are the same domain)")
        out[d] = node
    return out


def _lookup(domain: str, mapping: dict[str, str]) -> str | None:
    if not domain:
        return None
    labels = domain.split(".")
    for i in range(len(labels)):
        node = mapping.get(".".join(labels[i:]))
        if node is not None:
            return node
    return None


def _expand_paths(path) -> list[Path]:
    if isinstance(path, (str, os.PathLike)):
        items = [Path(path)]
    elif isinstance(path, Iterable):
        items = [Path(p) for p in path]
    else:
        raise ValueError(f"path must be a file, a folder or a list of files, got {type(path).__name__}")
    files: list[Path] = []
    for p in items:
        if p.is_dir():
            found = sorted(f for f in p.iterdir() if f.is_file() and re.search(r"\.(csv|tsv|txt|zip|gz)$", f.name, re.I))
            if not found:
                raise ValueError(f"{p}: the folder holds no .csv/.tsv/.txt/.zip/.gz files")
            files.extend(found)
        elif p.is_file():
            files.append(p)
        else:
            raise ValueError(f"{p}: no such file or folder; download the GDELT file(s) first (nothing is fetched)")
    if not files:
        raise ValueError("path names no files")
    return files


def _read_lines(file: Path) -> Iterator[tuple[str, int, str]]:
    """(where, line number, line) for each non-empty line; ``where`` names the file (and zip member)."""
    name = file.name.lower()
    try:
        if name.endswith(".zip"):
            with zipfile.ZipFile(file) as zf:
                members = [m for m in zf.namelist() if not m.endswith("/")]
                if not members:
                    raise DatasetFormatError(file, "the zip archive is empty")
                for member in members:
                    with zf.open(member) as raw:
                        yield from _lines(io.TextIOWrapper(raw, encoding="utf-8", errors="replace", newline=""),
                                          f"{file}:{member}")
        elif name.endswith(".gz"):
            with gzip.open(file, "rt", encoding="utf-8", errors="replace", newline="") as f:
                yield from _lines(f, str(file))
        else:
            with open(file, encoding="utf-8", errors="replace", newline="") as f:
                yield from _lines(f, str(file))
    except (zipfile.BadZipFile, gzip.BadGzipFile, EOFError) as exc:
        raise DatasetFormatError(file, f"not a readable archive ({exc})") from None


def _lines(f, where: str) -> Iterator[tuple[str, int, str]]:
    for lineno, line in enumerate(f, start=1):
        line = line.rstrip("\r\n")
        if line.strip():
            yield where, lineno, line


def _parse_row(line: str, format: str, where: str, lineno: int, file_no: int) -> _Row:
    columns, id_col, date_col, domain_col, url_col, title_col = _FORMATS[format]
    fields = line.split("\t")
    row = f"line {lineno}"
    if len(fields) != len(columns):
        hint = ""
        for other, spec in _FORMATS.items():
            if other != format and len(fields) == len(spec[0]):
                hint = f"; it has the column count of format={other!r}"
        if format == "events" and len(fields) == 58:
            hint = "; 58 columns is GDELT 1.0 - this loader reads the 2.0 export (61 columns)"
        if len(fields) == 1 and ("," in line):
            hint = "; the line has no tabs - GDELT files are tab-separated (is this a re-saved comma CSV?)"
        name = "GDELT GKG 2.1" if format == "gkg" else "GDELT 2.0 Events export"
        raise DatasetFormatError(where, f"expected {len(columns)} tab-separated columns ({name}), found "
                                 f"{len(fields)}{hint}", row=row)
    date_text = fields[date_col].strip()
    if not _DATE_RE.fullmatch(date_text):
        raise DatasetFormatError(where, f"{date_text!r} is not a GDELT timestamp YYYYMMDDHHMMSS (field "
                                 f"{date_col + 1} of {len(columns)})", row=row, column=columns[date_col])
    try:
        when = datetime.strptime(date_text, "%Y%m%d%H%M%S").replace(tzinfo=UTC)
    except ValueError:
        raise DatasetFormatError(where, f"{date_text!r} is not a valid date-time YYYYMMDDHHMMSS (field "
                                 f"{date_col + 1} of {len(columns)})", row=row, column=columns[date_col]) from None
    url = fields[url_col].strip()
    if not url:
        raise DatasetFormatError(where, f"empty document URL (field {url_col + 1} of {len(columns)})",
                                 row=row, column=columns[url_col])
    domain = normalise_domain(fields[domain_col]) if domain_col is not None else ""
    if not domain:
        domain = normalise_domain(url) if "://" in url or "." in url.split("/")[0] else ""
    if format == "events" and not domain:
        raise DatasetFormatError(where, f"SOURCEURL {url!r} has no host name (field {url_col + 1} of "
                                 f"{len(columns)})", row=row, column=columns[url_col])
    # the headline is worked out only for rows that are kept (see _headline): most rows of a GDELT file are unmapped
    return _Row(when=when, id=fields[id_col].strip() or f"{where}:{lineno}", domain=domain, url=url, title="",
                file_no=file_no, line=lineno, extras=fields[title_col] if title_col is not None else "")


def _headline(extras: str, url: str) -> str:
    """The ``<PAGE_TITLE>`` in a GKG V2EXTRASXML field, else a headline from the URL slug."""
    m = _TITLE_RE.search(extras) if "<PAGE_TITLE>" in extras.upper() else None
    title = _clean_text(m.group(1)) if m else ""
    return title or title_from_url(url)


def _dedupe(rows: list[_Row]) -> tuple[list[_Row], int]:
    seen_urls: set[str] = set()
    seen_titles: set[str] = set()
    kept: list[_Row] = []
    dropped = 0
    for r in rows:
        u = normalise_url(r.url)
        t = normalise_title(r.title)
        dup = u in seen_urls or (bool(t) and t in seen_titles)
        seen_urls.add(u)
        if t:
            seen_titles.add(t)
        if dup:
            dropped += 1
        else:
            kept.append(r)
    return kept, dropped


def _break_ties(timed: list[tuple[float, _Row]], how: str, window: float) -> tuple[list[tuple[float, _Row]], int]:
    by_node: dict[str, list[tuple[float, _Row]]] = {}
    for h, r in timed:
        by_node.setdefault(r.node, []).append((h, r))
    out: list[tuple[float, _Row]] = []
    n_ties = 0
    for items in by_node.values():
        items.sort(key=lambda hr: (hr[0], hr[1].when, normalise_url(hr[1].url), hr[1].file_no, hr[1].line))
        distinct = sorted({h for h, _ in items})
        rank = {h: k for k, h in enumerate(distinct)}
        i = 0
        while i < len(items):
            j = i
            while j < len(items) and items[j][0] == items[i][0]:
                j += 1
            group = items[i:j]
            t = group[0][0]
            n = len(group)
            if n == 1 or how == "keep":
                out.extend(group)
            elif how == "merge":
                out.append(group[0])
                n_ties += n - 1
            else:
                k_next = rank[t] + 1
                gap = distinct[k_next] - t if k_next < len(distinct) else window
                w = min(window, gap)
                out.extend((t + k * w / n, r) for k, (_, r) in enumerate(group))
                n_ties += n - 1
            i = j
    out.sort(key=lambda hr: (hr[0], hr[1].when, hr[1].node, hr[1].file_no, hr[1].line))
    return out, n_ties


def _iso(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def _clean_text(text: str) -> str:
    text = html.unescape(html.unescape(text))
    return re.sub(r"\s+", " ", text).strip()


def normalise_domain(value: str) -> str:
    """``'https://www.News.Example.com:443/x'`` → ``'news.example.com'`` (lower case, no scheme, ``www.``, port)."""
    s = str(value).strip().lower()
    if "://" in s:
        s = urlsplit(s).hostname or ""
    s = s.split("/")[0].split("?")[0].split("#")[0]
    s = s.rsplit("@", 1)[-1].split(":")[0].strip(".")
    while s.startswith("www.") or re.match(r"^www\d\.", s):
        s = s.split(".", 1)[1] if "." in s else ""
    return s


def normalise_url(url: str) -> str:
    """A URL's identity for de-duplication: no scheme, ``www.``, fragment, tracking parameters or trailing slash."""
    parts = urlsplit(str(url).strip())
    host = normalise_domain(parts.netloc) if parts.netloc else ""
    path = parts.path.rstrip("/")
    query = urlencode(sorted((k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
                             if not k.lower().startswith(_TRACKING_PARAMS)))
    if not host:
        return str(url).strip().lower().rstrip("/")
    return f"{host}{path}" + (f"?{query}" if query else "")


def normalise_title(title: str) -> str:
    """A headline's identity for de-duplication: unescaped, NFKC, case-folded, punctuation removed, and a short
    trailing site name after `` | `` / `` - `` / `` — `` dropped (``'Crew lands - Example News'`` → ``'crew lands'``)."""
    s = unicodedata.normalize("NFKC", _clean_text(str(title)))
    parts = _SUFFIX_SPLIT_RE.split(s)
    if len(parts) > 1 and len(parts[-1].split()) <= 4 and len(" ".join(parts[:-1]).split()) >= 3:
        s = " ".join(parts[:-1])
    s = s.casefold()
    s = "".join(ch if ch.isalnum() else " " for ch in s)
    return " ".join(s.split())


def title_from_url(url: str) -> str:
    """A readable headline from a URL's slug: ``…/2031/09/02/crew-lifts-off-toward-moon-1234567.html`` →
    ``'Crew lifts off toward moon'``; ``''`` when no segment looks like words."""
    path = urlsplit(str(url).strip()).path
    for seg in reversed([s for s in path.split("/") if s]):
        seg = _SLUG_EXT_RE.sub("", unquote(seg))
        if seg.lower() in _SLUG_SKIP:
            continue
        tokens = [t for t in re.split(r"[-_+.\s]+", seg) if t]
        words = [t for t in tokens if not t.isdigit() and not (len(t) >= 8 and re.fullmatch(r"[0-9a-fA-F]+", t))
                 and not re.fullmatch(r"[a-z]?\d+[a-z]?", t, re.I)]
        if len(words) >= 2 or (len(words) == 1 and len(words[0]) >= 4 and not tokens[0].isdigit()):
            text = " ".join(words)
            return text[:1].upper() + text[1:]
    return ""
