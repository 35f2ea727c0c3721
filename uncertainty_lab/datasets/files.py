"""Reading a data file, the one way every loader does it: a size cap, JSON list or JSON lines decided by content,
a cut-short file named as such, and errors that give the file and the line or record; then the record-level
checks every loader shares (a record's validation error named, ids unique) and the provenance fields it writes.

Files are untrusted input, so a loader reads at most ``max_bytes`` (default :data:`DEFAULT_MAX_BYTES`, 256 MiB,
counted after decompression) and says how to raise the cap. Nothing here touches the network.
"""

from __future__ import annotations

import json
import os
import zipfile
import zlib
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

from uncertainty_lab import untrusted
from uncertainty_lab.untrusted import Budget, UntrustedFileError

__all__ = [
    "DEFAULT_MAX_BYTES",
    "PACKAGE_SOURCE",
    "DatasetFormatError",
    "ReadBudget",
    "UniqueIds",
    "json_kind",
    "json_records",
    "provenance",
    "read_text",
    "record_from",
    "shipped_or_file",
    "text_lines",
]

T = TypeVar("T")

#: What a loader reads at most unless told otherwise (bytes, after decompression): 256 MiB.
DEFAULT_MAX_BYTES = untrusted.DEFAULT_MAX_BYTES

#: The ``source`` of the records the package ships (the default; other sources are written out).
PACKAGE_SOURCE = "uncertainty_lab"


class DatasetFormatError(UntrustedFileError):
    """A data file is not in the format its loader expects; names the file, row and column/field.

    ``truncated`` is true when the file ends in the middle of a record (an interrupted download).
    """


class ReadBudget(Budget):
    """How many bytes a loader may still read (``max_bytes=None``: no cap); one budget spans all its files."""

    def spend(self, n: int, where: str | os.PathLike[str], error: type[DatasetFormatError] = DatasetFormatError):
        super().spend(n, where, error)


def read_text(
    path: str | os.PathLike[str],
    *,
    max_bytes: int | None = DEFAULT_MAX_BYTES,
    error: type[DatasetFormatError] = DatasetFormatError,
) -> str:
    """The whole file as text (UTF-8, an optional byte-order mark dropped, newlines made ``\\n``), within the cap
    counted while reading; a pipe, a device or a folder is refused (:mod:`uncertainty_lab.untrusted`)."""
    return untrusted.read_text(path, what="the data file", max_bytes=max_bytes, error=error)


def shipped_or_file(
    path: str | os.PathLike[str] | None,
    shipped: Any,
    *,
    max_bytes: int | None = DEFAULT_MAX_BYTES,
    error: type[DatasetFormatError] = DatasetFormatError,
) -> tuple[str, str]:
    """``(where, text)`` of the file ``path`` (within the cap), or of the package's own file ``shipped`` (an
    ``importlib.resources`` traversable, so it reads from a wheel too) when ``path`` is None."""
    if path is None:
        return str(shipped), shipped.read_text(encoding="utf-8")
    return str(path), read_text(path, max_bytes=max_bytes, error=error)


def text_lines(file: Path, budget: ReadBudget, *, max_line: int = untrusted.DEFAULT_MAX_LINE
               ) -> Iterator[tuple[str, int, str, bool]]:
    """``(where, line number, line, complete)`` for each non-blank line of a plain, ``.zip`` or ``.gz`` file.

    ``where`` names the file (and the zip member); ``complete`` is false for a last line with no newline after
    it (a cut-short file ends so). Bytes count against ``budget`` as they are decompressed, and a line longer
    than ``max_line`` bytes is refused before more of it is read.
    """
    try:
        if file.name.lower().endswith(".zip"):
            with untrusted.open_binary(file, what="the data file") as raw, zipfile.ZipFile(raw) as zf:
                members = [m for m in zf.namelist() if not m.endswith("/")]
                if not members:
                    raise DatasetFormatError(file, "the zip archive is empty")
                for member in members:
                    with zf.open(member) as f:
                        yield from _lines(iter(lambda f=f: f.readline(max_line + 1), b""), f"{file}:{member}",
                                          budget, max_line)
        else:
            lines = (line for _, line in untrusted.iter_lines(file, what="the data file", budget=budget,
                                                              max_line=max_line, error=DatasetFormatError))
            yield from _lines(lines, str(file), None, max_line)
    except (zipfile.BadZipFile, zlib.error) as exc:
        raise DatasetFormatError(file, f"not a readable archive ({exc}; an interrupted download? download it "
                                 "again)") from None


def _lines(raw, where: str, budget: ReadBudget | None, max_line: int) -> Iterator[tuple[str, int, str, bool]]:
    lineno = 0
    try:
        for lineno, data in enumerate(raw, start=1):  # noqa: B007 - lineno is read after the loop
            if budget is not None:
                budget.spend(len(data), where)
            if len(data) > max_line:
                raise DatasetFormatError(where, f"a line longer than max_line={max_line} bytes; not a line-based "
                                         "data file of the expected kind", row=f"line {lineno}")
            line = data.decode("utf-8", errors="replace").rstrip("\r\n")
            if line.strip():
                yield where, lineno, line, data.endswith(b"\n")
    except EOFError:  # a .gz cut short
        raise DatasetFormatError.cut_short(where, lineno + 1) from None


# ---------------------------------------------------------------------------------------------------------------
# JSON list or JSON lines
# ---------------------------------------------------------------------------------------------------------------


def json_records(
    text: str,
    where: str | os.PathLike[str],
    *,
    what: str = "records",
    record_keys: tuple[str, ...] = (),
    error: type[DatasetFormatError] = DatasetFormatError,
) -> list[tuple[str, Any]]:
    """``(label, value)`` for each record of a JSON list (``record N``) or of JSON lines (``line N``).

    The content decides, not the file name: a file starting with ``[`` is a JSON list; one starting with ``{`` is
    JSON lines, or one (pretty-printed) object. A single object must have one of ``record_keys`` to count as a
    record (``{"data": [...]}`` is a wrapper, refused naming its keys). A file that stops inside a record is
    reported as cut short; ``what`` names the records in messages (e.g. ``"StrategyQA questions"``).
    """
    body = text.lstrip()
    if not body:
        raise error(where, "the file is empty")
    if body[0] == "[":
        return [(f"record {i}", r) for i, r in enumerate(_parse_whole(text, where, error), start=1)]
    if body[0] != "{":
        raise error(where, f"expected a JSON list of {what} (or JSON lines, one object a line); the file starts "
                    f"with {body[:30]!r}")
    lines = [(n, line) for n, line in enumerate(text.split("\n"), start=1) if line.strip()]
    try:
        first = untrusted.load_json(lines[0][1], where, row=f"line {lines[0][0]}", error=error)
    except json.JSONDecodeError:  # one pretty-printed object, or a broken first record
        return [("record 1", _one_object(_parse_whole(text, where, error), where, what, record_keys, error))]
    records = [(f"line {lines[0][0]}", first)]
    last = lines[-1][0]
    for n, line in lines[1:]:
        try:
            records.append((f"line {n}", untrusted.load_json(line, where, row=f"line {n}", error=error)))
        except json.JSONDecodeError as exc:
            if n == last and (_cut_at(line, exc) or not text.endswith("\n")):
                raise error.cut_short(where, n) from None
            raise error(where, f"not valid JSON ({exc.msg} at character {exc.pos + 1})", row=f"line {n}") from None
    if len(records) == 1:
        _one_object(first, where, what, record_keys, error)
    return records


def _parse_whole(text: str, where, error: type[DatasetFormatError]) -> Any:
    try:
        return untrusted.load_json(text, where, error=error)
    except json.JSONDecodeError as exc:
        if _cut_at(text, exc):
            raise error.cut_short(where, text.rstrip().count("\n") + 1) from None
        raise error(where, f"not valid JSON ({exc.msg})", row=f"line {exc.lineno}, column {exc.colno}") from None


def _cut_at(text: str, exc: json.JSONDecodeError) -> bool:
    """True when the parse failed because the text stops: a string never closed, or the error is at its end."""
    return exc.msg.startswith("Unterminated string") or exc.pos >= len(text.rstrip())


def _one_object(value: Any, where, what: str, record_keys: tuple[str, ...], error: type[DatasetFormatError]) -> Any:
    if isinstance(value, dict) and record_keys and not any(k in value for k in record_keys):
        keys = ", ".join(map(repr, list(value)[:8])) or "none"
        raise error(where, f"expected a JSON list of {what} (or JSON lines, one object a line), got a dict (a JSON "
                    f"object) with keys {keys} and none of the record fields {', '.join(record_keys)}; if the "
                    "records sit inside it, save that list on its own")
    return value


def json_kind(value: Any) -> str:
    """How a JSON value is called in messages (``an object``, ``a list``, ``null``…)."""
    return {dict: "an object", list: "a list", str: "a string", bool: "true/false", int: "an integer",
            float: "a number", type(None): "null"}.get(type(value), type(value).__name__)


# ---------------------------------------------------------------------------------------------------------------
# Records
# ---------------------------------------------------------------------------------------------------------------


def record_from(
    build: Callable[[Any], T],
    record: Any,
    where: str | os.PathLike[str],
    row: str,
    *,
    field_of: Callable[[str], str | None] | None = None,
    error: type[DatasetFormatError] = DatasetFormatError,
) -> T:
    """``build(record)``, its ``TypeError`` / ``ValueError`` turned into ``error`` naming the file, the row and the
    field (``field_of(message)``, when given, reads it from the message)."""
    try:
        return build(record)
    except (TypeError, ValueError) as exc:
        column = field_of(str(exc)) if field_of is not None else None
        raise error(where, str(exc), row=row, column=column) from None


class UniqueIds:
    """The ids of one file and where each was first seen: a repeat is an error naming both places."""

    def __init__(self, where: str | os.PathLike[str], *, error: type[DatasetFormatError] = DatasetFormatError):
        self.where = where
        self.error = error
        self._first: dict[str, str] = {}

    def add(self, key: str, row: str, *, first: str | None = None) -> None:
        """Note ``key`` at ``row`` (remembered as ``first``, by default ``row``); a key seen before is an error."""
        if key in self._first:
            raise self.error(self.where, f"duplicate id {key!r} (first on {self._first[key]})", row=row, column="id")
        self._first[key] = row if first is None else first


def provenance(source: str, meta: Mapping[str, Any]) -> dict[str, Any]:
    """A record's ``source`` and ``meta`` entries, each only when it is not the default (:data:`PACKAGE_SOURCE`, no
    meta): the shipped files stay as they are and a record read from a public data set round-trips whole."""
    out: dict[str, Any] = {}
    if source != PACKAGE_SOURCE:
        out["source"] = source
    if meta:
        out["meta"] = dict(meta)
    return out
