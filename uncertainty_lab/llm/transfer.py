"""Handing a completion cache over (an instructor's recording to a class): ``export`` writes a self-contained
copy without ever destroying what is at the destination; ``import`` trusts nothing in the file it reads.

Import reads the six named columns of a real ``completions`` table (not a view, not computed columns) and keeps a
row only when its key is the hash of its request and its answer is a completion record of that request; rows,
bytes and the size of one row are capped. The :class:`ImportReport` says what was added, skipped and why. The
export's notebook-mode marks (:mod:`.modes`) travel with it: an export copies the file, an import merges them.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sqlite3
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import untrusted
from .cache_file import CACHE_ENV, connect_read_only, where_it_looked
from .modes import read_modes
from .record import completion_problem, pair_problem, request_key, request_problem

COLUMNS = ("key", "backend", "model", "request", "response", "created")
MAX_ROWS = 500_000  # a full recording of every notebook is a few thousand rows
MAX_BYTES = 1 << 30  # request + answer text over all rows
MAX_ROW_BYTES = 4 << 20  # request + answer text of one row (an answer with logprobs is tens of KB)
_BATCH = 1000
_NOT_EXPORT = "{source} is not an uncertainty-lab cache export ({why}); pass a file written by `uncertainty-lab cache export`"
_ROWS = ("SELECT key, backend, model, CASE WHEN n <= :cap THEN request END, CASE WHEN n <= :cap THEN response END, n, "
         "created FROM (SELECT key, backend, model, request, response, created, coalesce(length(CAST(request AS BLOB)), 0)"
         " + coalesce(length(CAST(response AS BLOB)), 0) AS n FROM completions)")


@dataclass
class ImportReport:
    """What ``cache import`` did: rows ``added``, valid rows already ``present``, rows skipped per reason (with
    the first row numbers), why reading ``stopped`` early (a cap, a damaged page) or ``""``, and the notebook
    ``modes`` the export says its answers were recorded in (empty when it does not say; :mod:`.modes`)."""

    source: Path
    added: int = 0
    present: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    examples: dict[str, list[int]] = field(default_factory=dict)
    stopped: str = ""
    modes: frozenset[str] = frozenset()

    def skip(self, reason: str, row: int) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1
        if len(self.examples.setdefault(reason, [])) < 5:
            self.examples[reason].append(row)

    def problems(self) -> list[str]:
        """One line per reason rows were skipped (naming the first rows), and why reading stopped, if it did."""
        out = []
        for reason, n in self.skipped.items():
            rows = ", ".join(map(str, self.examples[reason])) + (", ..." if n > len(self.examples[reason]) else "")
            out.append(f"skipped {n} row{'s' * (n != 1)}: {reason} (row {rows})")
        return out + ([self.stopped] if self.stopped else [])


def _kind(path: Path) -> str:
    """What a non-regular path is, in words."""
    if not os.path.exists(path):
        return "a broken symbolic link"
    mode = os.stat(path).st_mode
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a named pipe"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def _check_target(dest: Path, live: Path, force: bool) -> None:
    if not os.path.lexists(dest):
        return
    if dest.resolve() in {live.resolve(), Path(f"{live.resolve()}-wal"), Path(f"{live.resolve()}-shm")}:
        raise ValueError(f"export destination {str(dest)!r} is the live cache itself; choose another path")
    if not os.path.isfile(dest):
        raise ValueError(f"export destination {dest} is {_kind(dest)}, not a regular file; give the path of a new file")
    if not force:
        raise FileExistsError(f"export destination {dest} already exists; pass --force (force=True) to replace it, "
                              "or give a new path")


def export_cache(cache: Any, dest: str | os.PathLike, *, force: bool = False) -> Path:
    """Write a self-contained copy of ``cache`` (SQLite online backup, one plain file) to ``dest``.

    Refuses a destination that is not a regular file, an existing file unless ``force``, and an empty cache
    (naming where it looked). The copy is written beside ``dest`` and moved into place, so a failed export leaves
    whatever was there untouched."""
    dest = Path(dest).expanduser().absolute()
    _check_target(dest, cache.path, force)
    if len(cache) == 0:
        raise ValueError(f"the completion cache is empty: nothing to export (looked in {where_it_looked(cache.path)}); "
                         f"record answers first, or set {CACHE_ENV} to the folder they were recorded in")
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OSError(f"cannot make the folder {dest.parent} for the export ({exc.strerror or exc}); "
                      "choose a path in a writable folder") from None
    tmp = dest.with_name(f".{dest.name}.partial-{os.getpid()}")
    done = False
    try:
        out = sqlite3.connect(tmp)
        try:
            cache.backup(out)
            out.execute("PRAGMA journal_mode=DELETE")  # a single self-contained file, readable from read-only media
        finally:
            out.close()
        _move_into_place(tmp, dest, force)
        done = True
    except FileExistsError:
        raise
    except (sqlite3.Error, OSError) as exc:
        raise OSError(f"cannot write the export {dest} ({getattr(exc, 'strerror', None) or exc}); "
                      "choose a path in a writable folder with free space") from None
    finally:
        if not done:
            with contextlib.suppress(OSError):
                tmp.unlink()
    return dest


def _move_into_place(tmp: Path, dest: Path, force: bool) -> None:
    """``tmp`` -> ``dest``; without ``force`` a hard link, so a file that appeared meanwhile is not replaced."""
    if not force:
        try:
            os.link(tmp, dest)
        except FileExistsError:
            raise FileExistsError(f"export destination {dest} already exists; pass --force (force=True) to "
                                  "replace it, or give a new path") from None
        except OSError:  # a filesystem without hard links: check once more, then rename
            if os.path.lexists(dest):
                raise FileExistsError(f"export destination {dest} already exists; pass --force to replace it") from None
        else:
            tmp.unlink()
            return
    os.replace(tmp, dest)


def _open_source(source: Path) -> sqlite3.Connection:
    """A read-only connection to an export whose ``completions`` is a real table with the six plain columns."""
    try:
        con = connect_read_only(source)
    except sqlite3.Error as exc:
        raise ValueError(_NOT_EXPORT.format(source=source, why=exc)) from None
    try:
        row = con.execute("SELECT type, sql FROM sqlite_master WHERE name = 'completions'").fetchone()
        why = ""
        if row is None:
            why = "it has no completions table"
        elif row[0] != "table" or (row[1] or "").lstrip().upper().startswith("CREATE VIRTUAL"):
            why = f"its completions is a {'virtual table' if row[0] == 'table' else row[0]}, not a table"
        else:
            hidden = {r[1]: r[6] for r in con.execute("PRAGMA table_xinfo(completions)")}
            missing = [c for c in COLUMNS if c not in hidden]
            computed = [c for c in COLUMNS if hidden.get(c)]
            why = (f"its completions table lacks {', '.join(missing)}" if missing
                   else f"its completions columns {', '.join(computed)} are computed, not stored" if computed else "")
    except sqlite3.Error as exc:
        why = str(exc)
    if why:
        con.close()
        raise ValueError(_NOT_EXPORT.format(source=source, why=why))
    return con


def _loads(text: str) -> Any:
    """The JSON value of a cache row's text (depth, huge integers and lone surrogates checked by the bounded
    reader), or ``ValueError`` when it is not one."""
    try:
        return untrusted.load_json(text, "a cache row")
    except ValueError:  # not JSON, too deep, a huge integer, a lone surrogate
        return ValueError


def verify_row(row: tuple) -> tuple[str, tuple | None]:
    """``("", clean row)`` for a trustworthy row ``(key, backend, model, request, response, size, created)``,
    else ``(why, None)``. The clean row stores the request and the answer re-serialised."""
    key, backend, model, request_text, response_text, _, created = row
    if not all(isinstance(v, str) for v in (key, backend, model, request_text, response_text)):
        return "key, backend, model, request or response is not text", None
    request = _loads(request_text)
    if request is ValueError:
        return "the request is not JSON", None
    problem = request_problem(request)
    if problem:
        return problem, None
    if request_key(request) != key:
        return "the key is not the hash of its request", None
    if (backend, model) != (request["backend"], request["model"]):
        return "the backend and model columns are not the request's", None
    response = _loads(response_text)
    if response is ValueError:
        return "the answer is not JSON", None
    problem = completion_problem(response) or pair_problem(request, response)
    if problem:
        return problem, None
    if not isinstance(created, int | float) or isinstance(created, bool) or not math.isfinite(created):
        return "created is not a time", None
    return "", (key, backend, model, json.dumps(request, ensure_ascii=False), json.dumps(response, ensure_ascii=False),
                float(created))


def _check_limit(name: str, value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return value


def import_cache(cache: Any, source: str | os.PathLike, *, max_rows: int = MAX_ROWS, max_bytes: int = MAX_BYTES,
                 max_row_bytes: int = MAX_ROW_BYTES) -> ImportReport:
    """Merge the trustworthy rows of the export at ``source`` into ``cache`` (existing entries are never replaced).

    Reads at most ``max_rows`` rows and ``max_bytes`` of request + answer text; a row larger than ``max_row_bytes``
    is skipped. A file that is no cache export is a ``ValueError`` naming it."""
    limits = {n: _check_limit(n, v) for n, v in
              (("max_rows", max_rows), ("max_bytes", max_bytes), ("max_row_bytes", max_row_bytes))}
    source = Path(source).expanduser().absolute()
    if not os.path.lexists(source):
        raise FileNotFoundError(f"cache file {str(source)!r} does not exist; pass the path of an exported cache")
    if not os.path.isfile(source):
        raise ValueError(_NOT_EXPORT.format(source=source, why=f"it is {_kind(source)}"))
    if source.resolve() == cache.path.resolve():
        raise ValueError(f"{source} is the live cache itself; import an exported copy")
    report = ImportReport(source)
    con = _open_source(source)
    try:
        _copy_rows(con, cache, report, **limits)
        _copy_modes(con, cache, report)
    finally:
        con.close()
    return report


def _copy_modes(con: sqlite3.Connection, cache: Any, report: ImportReport) -> None:
    """Merge the export's mode marks into ``cache`` (a set: both modes once both are imported), when any of its
    rows was usable; marks that cannot be read count as none."""
    try:
        report.modes = read_modes(con)
    except sqlite3.Error:
        report.modes = frozenset()
    if report.modes and (report.added or report.present):
        cache.mark_modes(report.modes)


def _copy_rows(con: sqlite3.Connection, cache: Any, report: ImportReport, *, max_rows: int, max_bytes: int,
               max_row_bytes: int) -> None:
    batch: list[tuple] = []
    total = number = 0
    try:
        for number, row in enumerate(con.execute(_ROWS, {"cap": max_row_bytes}), 1):
            if number > max_rows:
                report.stopped = (f"stopped after {max_rows} rows (max_rows, --max-rows): the rest of the file "
                                  "was not read")
                break
            size = row[5] or 0
            if size > max_row_bytes:
                report.skip(f"larger than {max_row_bytes} bytes (max_row_bytes, --max-row-mb)", number)
                continue
            if total + size > max_bytes:
                report.stopped = (f"stopped at row {number}: the rows before hold {total} bytes and max_bytes "
                                  f"(--max-mb) is {max_bytes}; the rest of the file was not read")
                break
            problem, clean = verify_row(row)
            if problem:
                report.skip(problem, number)
                continue
            total += size
            batch.append(clean)
            if len(batch) >= _BATCH:
                _flush(cache, batch, report)
    except sqlite3.Error as exc:
        report.stopped = f"stopped at row {number + 1}: the file is damaged there ({exc})"
    _flush(cache, batch, report)


def _flush(cache: Any, batch: list[tuple], report: ImportReport) -> None:
    if batch:
        added = cache.put_many(batch)
        report.added += added
        report.present += len(batch) - added
        batch.clear()
