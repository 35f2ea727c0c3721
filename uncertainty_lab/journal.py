"""Run journals: JSON Lines files written one flushed record at a time, so an interrupted run loses at most the
line it was writing and can be resumed.

Every lab's run file has the same grammar, read and resumed here once (:class:`JournalFormat`):

    {"type": "header", "format": "<lab format>/<version>", "config": {...}, ...}
    {"type": "<body type>", ...}          # steps, questions, a search episode's start record
    ...
    {"type": "<end type>", ...}           # "end" (or an episode's "final") when the run finished

:func:`read_records` returns the complete lines, taking a last line without its newline (or not JSON) for the
write an interruption cut short; :func:`drop_cut_tail` truncates it before a resumed run appends; and
:class:`JournalWriter` appends. What the body records mean stays with each lab's run record.
"""

from __future__ import annotations

import json
import os
import shlex
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import untrusted

__all__ = ["Journal", "JournalFormat", "JournalWriter", "config_changes", "config_diff", "drop_cut_tail", "read_records",
           "recovery", "refresh_header", "rewrite", "write_all"]


#: The largest run file read (bytes): 1 GiB, far above any run the labs write.
MAX_JOURNAL_BYTES = 2**30


def recovery(path: str | os.PathLike, line: int | None = None) -> str:
    """How to get past a damaged run file: move it aside and rerun (that unit starts afresh), or delete the bad
    line (the rest is kept)."""
    hint = (f"To recover: move the file aside (mv {shlex.quote(str(path))} {shlex.quote(str(path) + '.damaged')}) "
            "and rerun to start that unit afresh")
    return hint + (f", or delete line {line} of it to keep the rest" if line is not None else "")


def read_records(path: str | os.PathLike, *, error: type[Exception] = ValueError,
                 what: str = "the file is damaged") -> tuple[list[tuple[int, Any]], int]:
    """``([(line number, record), ...], offset)``: each complete, non-blank line of the JSONL file at ``path``
    parsed, and the byte offset after the last complete line. A last line that has no newline or is not JSON
    was cut short and is left out; a line that is not JSON anywhere else is ``error`` ("… line N is not JSON
    (…); ``what``" and how to recover, :func:`recovery`)."""
    path = Path(path)
    try:
        data = untrusted.read_bytes(path, what="the run file",
                                    max_bytes=MAX_JOURNAL_BYTES, decompress=False)
    except untrusted.UntrustedFileError as exc:
        raise error(f"{exc}. {recovery(path)}") from None
    records: list[tuple[int, Any]] = []
    pos = good = line_no = 0
    while pos < len(data):
        nl = data.find(b"\n", pos)
        if nl < 0:  # an unterminated last line: a write the interruption cut short
            break
        line = data[pos:nl]
        line_no += 1
        pos = nl + 1
        if line.strip():
            try:
                records.append((line_no, untrusted.load_json(line, path, row=f"line {line_no}")))
            except json.JSONDecodeError as exc:
                if pos >= len(data):  # the last line is garbage: cut short too
                    break
                raise error(f"{path} line {line_no} is not JSON ({exc}); {what} {recovery(path, line_no)}") from None
            except untrusted.UntrustedFileError as exc:
                if pos >= len(data):  # e.g. a last line cut inside a multi-byte character
                    break
                raise error(f"{exc}; {what} {recovery(path, line_no)}") from None
        good = pos
    return records, good


def drop_cut_tail(path: str | os.PathLike, good: int) -> None:
    """Truncate ``path`` to ``good`` bytes when a cut-short line follows them (see :func:`read_records`)."""
    path = Path(path)
    if good < path.stat().st_size:
        with open(path, "r+b") as f:
            f.truncate(good)


class JournalWriter:
    """Writes one JSON record a line to ``path`` (opened with ``mode``, "w" or "a"), flushed at once; with
    ``path=None`` it writes nothing (an in-memory run). ``allow_nan=False`` refuses NaN/inf (strict JSON)."""

    def __init__(self, path: str | os.PathLike | None, mode: str = "w", *, allow_nan: bool = True):
        self.allow_nan = allow_nan
        self.f = open(path, mode, encoding="utf-8") if path is not None else None  # noqa: SIM115

    def write(self, rec: Any) -> None:
        if self.f is not None:
            self.f.write(json.dumps(rec, ensure_ascii=False, allow_nan=self.allow_nan) + "\n")
            self.f.flush()

    def close(self) -> None:
        if self.f is not None:
            self.f.close()

    def __enter__(self) -> JournalWriter:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def config_changes(old: Any, new: Any, prefix: str = "") -> list[tuple[str, Any, Any]]:
    """``(dotted key, old value, new value)`` wherever two JSON configurations differ."""
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[tuple[str, Any, Any]] = []
        for k in sorted(set(old) | set(new), key=str):
            out += config_changes(old.get(k), new.get(k), f"{prefix}.{k}" if prefix else str(k))
        return out
    return [] if old == new else [(prefix or "(root)", old, new)]


def config_diff(old: Any, new: Any, prefix: str = "") -> list[str]:
    """The dotted keys where two JSON configurations differ (``["k", "selector.params.ranking"]``)."""
    return [key for key, _, _ in config_changes(old, new, prefix)]


def _short(value: Any, width: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def _differing(old: Any, new: Any, width: int = 60) -> tuple[str, str]:
    """The reprs of two values that differ, each cut to about ``width`` characters around the first character where
    they differ (``…`` marks what was cut), so two long values that share a start still show their difference."""
    a, b = repr(old), repr(new)
    if len(a) <= width and len(b) <= width:
        return a, b
    first = len(os.path.commonprefix([a, b]))
    start = max(0, first - width // 3)

    def window(text: str) -> str:
        return ("…" if start else "") + text[start:start + width] + ("…" if start + width < len(text) else "")

    return window(a), window(b)


def _changes_line(changes: list[tuple[str, Any, Any]], shown: int = 6) -> str:
    """``key: file X vs now Y`` for the first ``shown`` changes, then how many more."""
    parts = [f"{k}: file {a} vs now {b}" for k, a, b in ((k, *_differing(a, b)) for k, a, b in changes[:shown])]
    more = f"; … and {len(changes) - shown} more" if len(changes) > shown else ""
    return "; ".join(parts) + more


@dataclass
class Journal:
    """A run file as read: its ``header``, the ``body`` records in order, the ``end`` record (None while the run
    is unfinished, or when body records were appended after it: an extended run), and ``good``, the bytes of
    complete lines."""

    path: Path
    header: dict[str, Any] | None
    body: list[dict[str, Any]] = field(default_factory=list)
    end: dict[str, Any] | None = None
    good: int = 0

    @property
    def config(self) -> dict[str, Any]:
        return (self.header or {}).get("config", {})

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [r for r in self.body if r.get("type") == kind]


@dataclass(frozen=True)
class JournalFormat:
    """One lab's run-file format: its ``name`` (``"uncertainty_lab.cascade/1"``), the ``body`` record types, the
    ``end`` type, the lab's ``error`` (a damaged or foreign file) and ``resume_error`` (a different
    configuration) classes, and ``what`` the file is ("cascade run", "search episode") for messages."""

    name: str
    body: tuple[str, ...]
    end: str = "end"
    error: type[Exception] = ValueError
    resume_error: type[Exception] = ValueError
    what: str = "run"

    def read(self, path: str | os.PathLike) -> Journal:
        """Read a run file (finished or cut short). A damaged line, a second header, a record before the header,
        an unknown record type or another format is ``error`` naming the line and how to recover (:func:`recovery`)."""
        path = Path(path)
        lines, good = read_records(path, error=self.error, what=f"is this a {self.what} file?")
        journal = Journal(path, None, good=good)
        for line_no, rec in lines:
            kind = rec.get("type") if isinstance(rec, dict) else None
            if kind == "header":
                if journal.header is not None:
                    raise self.error(f"{path} line {line_no}: a second header; the file mixes two {self.what}s. "
                                     + recovery(path, line_no))
                if rec.get("format") != self.name:
                    raise self.error(f"{path}: format {rec.get('format')!r} is not {self.name!r}; it is not a "
                                     f"{self.what} file of this version. {recovery(path)}")
                journal.header = rec
            elif journal.header is None:
                raise self.error(f"{path} line {line_no}: a {kind!r} record before the header; it is not a "
                                 f"{self.what} file. {recovery(path)}")
            elif kind in self.body:
                journal.body.append(rec)
                journal.end = None
            elif kind == self.end:
                journal.end = rec
            else:
                raise self.error(f"{path} line {line_no}: unknown record {json.dumps(rec)[:80]!r}. "
                                 + recovery(path, line_no))
        return journal

    def load(self, path: str | os.PathLike) -> Journal:
        """:meth:`read` a file that must exist and hold a header."""
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"no {self.what} file at {path}")
        journal = self.read(path)
        if journal.header is None:
            raise self.error(f"{path} has no header line; it is not a {self.what} file (or it is empty)")
        return journal

    def open(self, path: str | os.PathLike | None, config: dict[str, Any], *, resume: bool = True,
             allow_nan: bool = True, moved: tuple[str, ...] = (), **header: Any) -> tuple[Journal | None, JournalWriter]:
        """Start or continue the run file at ``path`` for a run configured by ``config`` (JSON values).

        With ``resume`` and a file that holds a header: the same configuration continues it — the journal read so
        far comes back and the writer appends after its last complete line; another configuration is
        ``resume_error`` naming the settings that differ. Otherwise the file is (re)started with a header
        ``{"type": "header", "format", "config", **header}``. ``path=None``: an in-memory run (no file). ``moved``:
        settings an older file holds in its ``config`` that this version records elsewhere in the header (e.g. what a
        result depends on, checked by the lab): left out of the comparison."""
        if path is None:
            return None, JournalWriter(None)
        path = Path(path)
        if resume and path.is_file() and path.stat().st_size > 0:
            journal = self.read(path)
            if journal.header is not None:
                old = {k: v for k, v in journal.config.items() if k not in moved or k in config}
                changes = config_changes(old, config)
                if changes:
                    raise self.resume_error(
                        f"cannot resume {path}: it was made with a different configuration "
                        f"({_changes_line(changes)}). Pass the same settings "
                        "to continue it, resume=False to overwrite it, or another path")
                drop_cut_tail(path, journal.good)
                return journal, JournalWriter(path, "a", allow_nan=allow_nan)
        path.parent.mkdir(parents=True, exist_ok=True)
        writer = JournalWriter(path, "w", allow_nan=allow_nan)
        writer.write({"type": "header", "format": self.name, "config": config, **header})
        return None, writer


def refresh_header(fmt: JournalFormat, path: str | os.PathLike | None, config: dict[str, Any],
                   allowed: Callable[[str], bool], **header: Any) -> list[tuple[str, Any, Any]]:
    """When the run file at ``path`` differs from ``config`` only in settings ``allowed(dotted key)`` accepts —
    what its results are graded against, not what produced them — rewrite its header with ``config`` (and
    ``header``), keep its body, and return the changes; otherwise return ``[]`` and write nothing (then
    :meth:`JournalFormat.open` refuses, naming the differences)."""
    if path is None or not Path(path).is_file() or Path(path).stat().st_size == 0:
        return []
    journal = fmt.read(path)
    if journal.header is None:
        return []
    changes = config_changes(journal.config, config)
    if not changes or not all(allowed(key) for key, _, _ in changes):
        return []
    new = {**journal.header, **header, "config": config}
    body = [*journal.body, *([journal.end] if journal.end is not None else [])]
    rewrite(path, [new, *body])
    return changes


def rewrite(path: str | os.PathLike, records: Iterable[Any], *, allow_nan: bool = True) -> Path:
    """Replace the run file at ``path`` by ``records`` at once (a temporary file in the same folder renamed into
    place): a reader, or a run interrupted meanwhile, sees the old file or the new one, never half of one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent)
    os.close(fd)
    try:
        with JournalWriter(tmp, "w", allow_nan=allow_nan) as writer:
            for rec in records:
                writer.write(rec)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_all(path: str | os.PathLike, records: Iterable[Any]) -> Path:
    """Write ``records`` as a whole JSONL file (a run saved in one go)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with JournalWriter(path, "w") as writer:
        for rec in records:
            writer.write(rec)
    return path
