"""GDELT 2.0 exports you downloaded, as a news cascade: GKG 2.1 or Events files (tab-separated, no header; plain,
``.zip`` or ``.gz``) read into :class:`~uncertainty_lab.datasets.news.NewsEvent` s, mapped to nodes by source
domain, de-duplicated, optionally binned in time, with ties at a node broken deterministically and reported.

GDELT 2.0 stamps every row of one 15-minute file with the same time, so events of one node tie; the loader says
how many and how far it moved them (:class:`~uncertainty_lab.datasets.ties.TieReport`). Nothing here touches the
network.
"""

from __future__ import annotations

import math
import os
import re
import warnings
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from uncertainty_lab.datasets.files import DEFAULT_MAX_BYTES, DatasetFormatError, ReadBudget, text_lines
from uncertainty_lab.datasets.gdelt_report import GdeltEvents, GdeltReport
from uncertainty_lab.datasets.news import NewsEvent
from uncertainty_lab.datasets.subset import check_subset, take
from uncertainty_lab.datasets.ties import TIES, break_ties
from uncertainty_lab.datasets.urls import (
    clean_text,
    is_listing_url,
    normalise_domain,
    normalise_title,
    normalise_url,
    title_from_url,
)
from uncertainty_lab.untrusted import check_path

__all__ = ["EVENTS_COLUMNS", "GKG_COLUMNS", "load_gdelt"]

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
    # format: (columns, id column, date column, domain column or None, url column, title column or None, name)
    "gkg": (GKG_COLUMNS, 0, 1, 3, 4, 26, "GDELT GKG 2.1"),
    "events": (EVENTS_COLUMNS, 0, 59, None, 60, None, "GDELT 2.0 Events export"),
}
#: Other files people download or extract, by their number of columns: named when one is given instead.
_OTHER_WIDTHS = {
    16: "the GDELT 2.0 Mentions table (not read here: load the Events export or the GKG of the same 15 minutes)",
    57: "a GDELT 1.0 historical events file (no SOURCEURL; this loader reads the GDELT 2.0 Events export, "
        "61 columns)",
    58: "GDELT 1.0 - daily events with a DATEADDED day, not a time; this loader reads the 2.0 export (61 columns)",
}
_TITLE_RE = re.compile(r"<PAGE_TITLE>(.*?)</PAGE_TITLE>", re.S | re.I)
_DATE_RE = re.compile(r"\d{14}")
_MAX_LISTED = 20


@dataclass
class _Row:
    when: datetime
    id: str
    domain: str
    url: str
    key: str  # normalise_url(url)
    file_no: int
    line: int
    node: str = ""
    title: str = ""
    slug_title: bool = False  # the title came from the URL slug, not a page title
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
    gkg: str | os.PathLike[str] | Iterable[str | os.PathLike[str]] | None = None,
    limit: int | None = None,
    sample: int | None = None,
    seed: int = 0,
    max_bytes: int | None = DEFAULT_MAX_BYTES,
) -> GdeltEvents:
    """Read GDELT files you downloaded into :class:`NewsEvent` s with hours since the first kept event.

    ``path``: one file, several (a list), or a folder (its ``.csv``/``.tsv``/``.txt``/``.zip``/``.gz`` files in
    name order). ``format``: ``"gkg"`` — GKG 2.1 (27 columns, :data:`GKG_COLUMNS`: time ``V2.1DATE``, domain
    ``V2SOURCECOMMONNAME``, URL ``V2DOCUMENTIDENTIFIER``, headline ``<PAGE_TITLE>`` in ``V2EXTRASXML``); or
    ``"events"`` — the Events 2.0 export (61 columns, :data:`EVENTS_COLUMNS`: time ``DATEADDED``, URL
    ``SOURCEURL``, domain from the URL). ``gkg``: GKG file(s) of the same period, whose page titles become the
    headlines of the rows with the same URL (an Events export has no titles). Without a page title the headline
    comes from the URL slug when it is words (:func:`~uncertainty_lab.datasets.urls.title_from_url`), else it is
    empty (counted in ``.report.n_untitled``): an article id is never a headline nor a de-duplication key. A tag,
    category, topic or index page (:func:`~uncertainty_lab.datasets.urls.is_listing_url`) has no headline either,
    whatever its page title (counted in ``.report.n_listing``). An event without a headline is kept for the
    timing and is no reference text.

    ``domain_to_node`` maps source domains (or URLs) to node names; a subdomain matches its parent, the most
    specific key winning; other rows are counted in ``.report.unmapped`` (and warned about with ``warn=True``).
    ``keywords`` keeps rows whose headline or URL has one of them. ``dedupe`` drops a row whose URL or page
    title (or slug of three words or more) appeared earlier. ``bin_hours`` floors times to that grid.

    ``ties`` (a node with several events at one time): ``"spread"`` moves the k-th of n to t + k·w/n,
    w = min(``tie_window_hours``, the gap to that node's next time; default ``bin_hours``, else 0.25 h, GDELT's
    cycle), ordered by GDELT time then URL; ``"merge"`` keeps the first; ``"keep"`` leaves them.
    ``.ties_report`` says how many were tied and how far times moved; each ``timestamp`` keeps the GDELT time.
    ``on_error``: ``"raise"`` at the first malformed row, or ``"skip"`` and count it (a file in another format
    always raises, naming the format it looks like). Then ``sample`` / ``limit`` (time order kept); at most
    ``max_bytes`` are read (after decompression). Returns a :class:`GdeltEvents` list with ``.report``.
    """
    window, bin_hours, words = _check_options(format, ties, on_error, bin_hours, tie_window_hours, keywords)
    check_subset(limit, sample, seed)
    mapping = _check_mapping(domain_to_node)
    files = _expand_paths(path)
    budget = ReadBudget(max_bytes)
    report = GdeltReport(files=tuple(str(f) for f in files), format=format, ties=ties, bin_hours=bin_hours)
    rows = _read_rows(files, format, mapping, on_error, budget, report)
    titles = _gkg_titles(_expand_paths(gkg), {r.key for r in rows}, budget) if gkg is not None else {}
    rows = _titled(rows, titles, words, report)
    rows.sort(key=lambda r: (r.when, r.file_no, r.line))
    if dedupe:
        rows, report.n_duplicates = _dedupe(rows)
    events = _timed_events(rows, bin_hours, ties, window, report)
    kept = take(events, limit=limit, sample=sample, seed=seed)
    report.n_not_sampled = len(events) - len(kept)
    report.n_kept = len(kept)
    report.n_untitled = sum(not e.headline for e in kept)
    report.per_node = dict(sorted(Counter(e.node for e in kept).items()))
    if warn and report.n_unmapped:
        top = ", ".join(f"{d} ({n})" for d, n in list(report.unmapped.items())[:5])
        warnings.warn(
            f"load_gdelt: {report.n_unmapped} of {report.n_rows} rows came from domains not in domain_to_node and "
            f"were left out (most common: {top}); see .report.unmapped, or add those domains to the mapping",
            UserWarning, stacklevel=2,
        )
    return GdeltEvents(kept, report)


def _check_options(format, ties, on_error, bin_hours, tie_window_hours, keywords):
    """``(tie window, bin_hours, keywords)`` checked: errors name the argument and what it accepts."""
    if format not in _FORMATS:
        raise ValueError(f"format must be 'gkg' (GKG 2.1) or 'events' (Events 2.0 export), got {format!r}")
    if ties not in TIES:
        raise ValueError(f"ties must be 'spread', 'merge' or 'keep', got {ties!r}")
    if on_error not in ("raise", "skip"):
        raise ValueError(f"on_error must be 'raise' or 'skip', got {on_error!r}")
    bin_hours = _positive_or_none(bin_hours, "bin_hours")
    window = _positive_or_none(tie_window_hours, "tie_window_hours")
    if window is None:
        window = bin_hours if bin_hours is not None else 0.25
    words = None
    if keywords is not None:
        words = [str(w).casefold() for w in ([keywords] if isinstance(keywords, str) else keywords) if str(w).strip()]
        if not words:
            raise ValueError("keywords must hold at least one non-empty word (or pass keywords=None)")
    return window, bin_hours, words


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
    labels = domain.split(".") if domain else []
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
            named = sorted(f for f in p.iterdir() if re.search(r"\.(csv|tsv|txt|zip|gz)$", f.name, re.I))
            found = [check_path(f, what="data.path") for f in named if not f.is_dir()]  # a pipe: refused, named
            if not found:
                raise ValueError(f"{p}: the folder holds no .csv/.tsv/.txt/.zip/.gz files")
            files.extend(found)
        elif os.path.lexists(p):
            files.append(check_path(p, what="data.path"))  # a pipe, a device, a dangling link: said so
        else:
            raise ValueError(f"{p}: no such file or folder; download the GDELT file(s) first (nothing is fetched)")
    if not files:
        raise ValueError("path names no files")
    return files


# ---------------------------------------------------------------------------------------------------------------
# Rows
# ---------------------------------------------------------------------------------------------------------------


def _read_rows(files, format, mapping, on_error, budget, report: GdeltReport) -> list[_Row]:
    """The rows whose domain maps to a node (node set); unmapped and malformed rows are counted in ``report``."""
    unmapped: Counter[str] = Counter()
    rows: list[_Row] = []
    for file_no, file in enumerate(files):
        first = True
        for where, lineno, line, complete in text_lines(file, budget):
            report.n_rows += 1
            try:
                row = _parse_row(line, format, where, lineno, file_no, first, complete)
            except DatasetFormatError as exc:
                if on_error == "raise" or getattr(exc, "wrong_format", False):
                    raise
                report.n_malformed += 1
                if len(report.malformed) < _MAX_LISTED:
                    report.malformed.append(str(exc))
                continue
            finally:
                first = False
            row.node = _lookup(row.domain, mapping) or ""
            if row.node:
                rows.append(row)
            else:
                unmapped[row.domain or "(no domain)"] += 1
    report.n_unmapped = sum(unmapped.values())
    report.unmapped = dict(sorted(unmapped.items(), key=lambda kv: (-kv[1], kv[0])))
    return rows


def _parse_row(line: str, format: str, where: str, lineno: int, file_no: int, first: bool, complete: bool) -> _Row:
    columns, id_col, date_col, domain_col, url_col, title_col, name = _FORMATS[format]
    fields = line.split("\t")
    row = f"line {lineno}"
    if not complete:  # GDELT ends every row with a newline: a last line without one was cut (maybe mid-URL)
        raise DatasetFormatError.cut_short(where, lineno)
    if len(fields) != len(columns):
        hint = _width_hint(len(fields), line, format)
        error = DatasetFormatError(where, f"expected {len(columns)} tab-separated columns ({name}), found "
                                   f"{len(fields)}{hint}", row=row)
        error.wrong_format = first and bool(hint)  # a file in another format: refused whatever on_error says
        raise error
    date_text = fields[date_col].strip()
    try:
        if not _DATE_RE.fullmatch(date_text):
            raise ValueError("not 14 digits")
        when = datetime.strptime(date_text, "%Y%m%d%H%M%S").replace(tzinfo=UTC)
    except ValueError:
        what = "a GDELT timestamp" if not _DATE_RE.fullmatch(date_text) else "a valid date-time"
        raise DatasetFormatError(where, f"{date_text!r} is not {what} YYYYMMDDHHMMSS (field {date_col + 1} of "
                                 f"{len(columns)})", row=row, column=columns[date_col]) from None
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
    return _Row(when=when, id=fields[id_col].strip() or f"{where}:{lineno}", domain=domain, url=url,
                key=normalise_url(url), file_no=file_no, line=lineno,
                extras=fields[title_col] if title_col is not None else "")


def _width_hint(n: int, line: str, format: str) -> str:
    """What a row of ``n`` columns looks like when it is not ``format``: another GDELT file, or an extract."""
    if n == 1 and "," in line:
        return "; the line has no tabs - GDELT files are tab-separated (is this a re-saved comma CSV?)"
    for other, spec in _FORMATS.items():
        if other != format and n == len(spec[0]):
            return f"; it has the column count of format={other!r} ({spec[-1]})"
    if n in _OTHER_WIDTHS:
        return f"; {n} columns is {_OTHER_WIDTHS[n]}"
    if n <= 10:
        return (f"; {n} columns looks like an extract (a query result with chosen columns): this loader reads "
                f"whole GDELT 2.0 files, the Events export ({len(EVENTS_COLUMNS)} columns) or GKG 2.1 "
                f"({len(GKG_COLUMNS)})")
    return ""


def _page_title(extras: str) -> str:
    m = _TITLE_RE.search(extras) if "<PAGE_TITLE>" in extras.upper() else None
    return clean_text(m.group(1)) if m else ""


def _gkg_titles(files: list[Path], wanted: set[str], budget: ReadBudget) -> dict[str, str]:
    """``{normalised URL: page title}`` from GKG files, for the URLs in ``wanted``."""
    titles: dict[str, str] = {}
    for file in files:
        for where, lineno, line, complete in text_lines(file, budget):
            fields = line.split("\t")
            if len(fields) != len(GKG_COLUMNS):
                if not complete:
                    raise DatasetFormatError.cut_short(where, lineno)
                raise DatasetFormatError(where, f"gkg= expects GDELT GKG 2.1 files ({len(GKG_COLUMNS)} "
                                         f"tab-separated columns), found {len(fields)}"
                                         f"{_width_hint(len(fields), line, 'gkg')}", row=f"line {lineno}")
            key = normalise_url(fields[4].strip())
            if key in wanted and key not in titles and (title := _page_title(fields[26])):
                titles[key] = title
    return titles


def _titled(rows: list[_Row], titles: dict[str, str], words, report: GdeltReport) -> list[_Row]:
    """Rows with their headline (page title, GKG title, else a slug of words), keeping those on ``keywords``."""
    kept = []
    for row in rows:
        row.title, row.extras = _page_title(row.extras), ""
        if is_listing_url(row.url):  # a tag / category / topic / index page: its title names a list, no headline
            row.title = ""
            report.n_listing += 1
        elif not row.title and row.key in titles:
            row.title = titles[row.key]
            report.n_titles_from_gkg += 1
        if not row.title:
            row.title, row.slug_title = title_from_url(row.url), True
        if words is not None and not any(w in f"{row.title} {row.url}".casefold() for w in words):
            report.n_off_topic += 1
            continue
        kept.append(row)
    return kept


def _dedupe(rows: list[_Row]) -> tuple[list[_Row], int]:
    """Drop a row whose URL, or title, an earlier row had; a slug title counts only with three words or more."""
    seen: set[str] = set()
    kept: list[_Row] = []
    for r in rows:
        keys = {f"url:{r.key}"}
        title = normalise_title(r.title)
        if title and (not r.slug_title or len(title.split()) >= 3):
            keys.add(f"title:{title}")
        if not keys & seen:
            kept.append(r)
        seen |= keys
    return kept, len(rows) - len(kept)


def _timed_events(rows: list[_Row], bin_hours, ties: str, window: float, report: GdeltReport) -> list[NewsEvent]:
    """Hours since the first row (binned), ties broken; fills ``t0``, ``n_ties`` and ``ties_report``."""
    if not rows:
        return []
    t0 = rows[0].when
    report.t0 = _iso(t0)
    hours = [(r.when - t0).total_seconds() / 3600.0 for r in rows]
    if bin_hours is not None:
        hours = [math.floor(h / bin_hours + 1e-9) * bin_hours for h in hours]
    timed, report.ties_report = break_ties(list(zip(hours, rows, strict=True)), ties, window, node=lambda r: r.node,
                                           order=lambda r: (r.when, r.node, r.key, r.file_no, r.line))
    report.n_ties = report.ties_report.n_moved + report.ties_report.n_dropped
    if ties == "merge":
        size = Counter((r.node, h) for h, r in zip(hours, rows, strict=True))
        report.tie_counts = {r.id: size[(r.node, h)] for h, r in timed if size[(r.node, h)] > 1}
    return [NewsEvent(id=r.id, time_h=h, timestamp=_iso(r.when), node=r.node, source=r.domain, headline=r.title,
                      url=r.url) for h, r in timed]


def _iso(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")
