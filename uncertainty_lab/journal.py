"""Run journals: JSON Lines files written one flushed record at a time, so an interrupted run loses at most the
line it was writing and can be resumed.

The cascade, orchestration and search runs share the framing: :func:`read_records` returns the complete lines,
taking a last line without its newline (or not JSON) for the write an interruption cut short;
:func:`drop_cut_tail` truncates the file after the last complete line before a resumed run appends; and
:class:`JournalWriter` appends. What the records mean (header, steps, end) stays with each run's reader.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

__all__ = ["JournalWriter", "drop_cut_tail", "read_records"]


def read_records(path: str | os.PathLike, *, error: type[Exception] = ValueError,
                 what: str = "the file is damaged") -> tuple[list[tuple[int, Any]], int]:
    """``([(line number, record), ...], offset)``: each complete, non-blank line of the JSONL file at ``path``
    parsed, and the byte offset after the last complete line. A last line that has no newline or is not JSON
    was cut short and is left out; a line that is not JSON anywhere else is ``error`` ("… line N is not JSON
    (…); ``what``")."""
    path = Path(path)
    data = path.read_bytes()
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
                records.append((line_no, json.loads(line)))
            except json.JSONDecodeError as exc:
                if pos >= len(data):  # the last line is garbage: cut short too
                    break
                raise error(f"{path} line {line_no} is not JSON ({exc}); {what}") from None
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
