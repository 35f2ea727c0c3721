"""One SQLite cache for every completion, content-addressed by backend, model, messages, parameters,
seed and sample index. WAL mode, so several processes (a class, a test run) can share a file.

A fault of the file or its folder (damaged, unwritable, a file where the folder should be) is one
:class:`CacheError` line naming the file and the fix; a file that can be read but not written still serves its
answers. Faults are classified in :mod:`.cache_file`; ``export`` and ``import_file`` (the classroom
hand-over) live in :mod:`.transfer`.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .cache_file import (
    CACHE_ENV,
    FILE_NAME,
    REPLAY_ENV,
    CacheError,
    CacheWarning,
    absolute_dir,
    cache_dir,
    connect_read_only,
    connect_recording,
    fault,
    warn_once,
)
from .modes import MODES, current_mode, read_modes
from .modes import SCHEMA as _MODES_SCHEMA
from .modes import TABLE as _MODES_TABLE
from .record import request_key
from .transfer import ImportReport, export_cache, import_cache

__all__ = ["CACHE_ENV", "REPLAY_ENV", "CacheError", "CacheStats", "CacheWarning", "CompletionCache", "ImportReport",
           "cache_dir", "default_cache", "replay_cache", "request_key", "warn_once"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS completions (
    key TEXT PRIMARY KEY,
    backend TEXT NOT NULL,
    model TEXT NOT NULL,
    request TEXT NOT NULL,
    response TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS completions_backend_model ON completions (backend, model);
""" + _MODES_SCHEMA


@dataclass(frozen=True)
class CacheStats:
    path: Path
    entries: int
    size_bytes: int
    by_model: dict[str, int]
    modes: frozenset[str] = frozenset()  # the notebook modes it holds answers for (llm/modes.py)


class CompletionCache:
    """A SQLite file of completions. One connection per thread; writes are idempotent
    (``INSERT OR IGNORE`` on the content key), so concurrent writers cannot corrupt or duplicate.

    Every method raises :class:`CacheError` (one line: the file and the fix) for a fault of the file. A file that
    can be read but not written opens read-only (``read_only``, ``write_error``): hits work, ``put`` raises.

    Each ``put`` marks the file with the notebook mode of the process writing (``fast`` with ``UL_FAST=1``, else
    ``full``; :mod:`.modes`), so a replay in the other mode can say why it finds no answer."""

    def __init__(self, path: str | os.PathLike | None = None, *, recording: bool = False):
        self.path = Path(path).expanduser().absolute() if path is not None else cache_dir() / FILE_NAME
        self.recording = recording
        self.read_only = False
        self.write_error: CacheError | None = None
        self._local = threading.local()
        self._damaged: set[str] = set()  # keys whose stored answer is unusable: the next put replaces it
        self._marked: set[str] = set()  # modes this object has marked the file with (one write per mode)
        self._open()

    def _open(self) -> None:
        if self.recording:
            return self._open_recording()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._connect().executescript(_SCHEMA)
            return
        except (sqlite3.Error, OSError) as exc:
            self.close()
            error = fault(self.path, exc)
        if error.fault != "unwritable" or not os.path.isfile(self.path):
            raise error
        self.read_only, self.write_error = True, error
        if "completions" not in {r[0] for r in self._run("SELECT name FROM sqlite_master WHERE type = 'table'")}:
            raise error

    def _open_recording(self) -> None:
        """A class recording (``recording=True``): an existing file, opened read-only however it is stored, so
        nothing is ever written beside it (see :func:`.cache_file.connect_recording`); ``put`` raises."""
        make = f"make it with `{CACHE_ENV}={self.path.parent} uncertainty-lab cache import class.sqlite`"
        if not os.path.isfile(self.path):
            raise CacheError(f"there is no class recording {self.path} (the folder {REPLAY_ENV} names)", make,
                             path=self.path, fault="missing")
        self.read_only = True
        self.write_error = CacheError(f"the class recording {self.path} is read-only",
                                      f"unset {REPLAY_ENV} to record into {CACHE_ENV}", path=self.path,
                                      fault="unwritable")
        if "completions" not in {r[0] for r in self._run("SELECT name FROM sqlite_master WHERE type = 'table'")}:
            raise CacheError(f"{self.path} is not a class recording (it has no completions table)", make,
                             path=self.path, fault="damaged")

    def _connect(self) -> sqlite3.Connection:
        con = getattr(self._local, "con", None)
        if con is None:
            if self.recording:
                con = connect_recording(self.path)
            elif self.read_only:
                con = connect_read_only(self.path)
            else:
                con = sqlite3.connect(self.path.as_uri(), timeout=60.0, isolation_level=None,
                                      check_same_thread=False, uri=True)
                try:
                    con.execute("PRAGMA journal_mode=WAL")
                    con.execute("PRAGMA synchronous=NORMAL")
                    con.execute("PRAGMA busy_timeout=60000")
                except BaseException:
                    con.close()
                    raise
            self._local.con = con
        return con

    def _run(self, sql: str, args: tuple = ()) -> list[tuple]:
        """The rows of one statement; any SQLite or OS failure as the :class:`CacheError` that names the fix."""
        try:
            return self._connect().execute(sql, args).fetchall()
        except (sqlite3.Error, OSError) as exc:
            raise fault(self.path, exc) from None

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored answer for ``key``, or None. A stored answer that is not a JSON object counts as a miss
        (with a warning), and the next :meth:`put` replaces it."""
        rows = self._run("SELECT response FROM completions WHERE key = ?", (key,))
        if not rows:
            return None
        try:
            rec = json.loads(rows[0][0])
        except (TypeError, ValueError):
            rec = None
        if not isinstance(rec, dict):
            self.discard(key, "the stored answer is not a JSON object")
            return None
        return rec

    def discard(self, key: str, why: str) -> None:
        """Treat the stored answer for ``key`` as a miss (warning once) and let the next put replace it."""
        warn_once(f"completion cache {self.path}: the stored answer for request {key[:12]} is unusable ({why}); "
                  "it counts as a miss and a new answer replaces it")
        self._damaged.add(key)

    def put(self, key: str, request: dict[str, Any], response: dict[str, Any]) -> None:
        if self.write_error is not None:
            raise self.write_error
        verb = "INSERT OR REPLACE" if key in self._damaged else "INSERT OR IGNORE"
        self._run(
            f"{verb} INTO completions (key, backend, model, request, response, created) VALUES (?,?,?,?,?,?)",
            (key, request["backend"], request["model"], json.dumps(request, ensure_ascii=False),
             json.dumps(response, ensure_ascii=False), time.time()),
        )
        self._damaged.discard(key)
        self.mark_modes([current_mode()])

    def mark_modes(self, modes) -> None:
        """Record that this file holds answers asked in each of ``modes`` (``"fast"``/``"full"``; see :mod:`.modes`)."""
        modes = set(modes)
        if not modes <= set(MODES):
            raise ValueError(f"modes must be among {MODES}, got {sorted(modes)}")
        for mode in modes - self._marked:
            if self.write_error is not None:
                raise self.write_error
            self._run(f"INSERT OR IGNORE INTO {_MODES_TABLE} (mode) VALUES (?)", (mode,))
            self._marked.add(mode)

    def modes(self) -> frozenset[str]:
        """The notebook modes this file holds answers for; empty when it does not say (see :mod:`.modes`)."""
        try:
            return read_modes(self._connect())
        except (sqlite3.Error, OSError) as exc:
            raise fault(self.path, exc) from None

    def put_many(self, rows: list[tuple]) -> int:
        """Insert verified rows ``(key, backend, model, request_json, response_json, created)`` in one
        transaction; return how many were new."""
        if self.write_error is not None:
            raise self.write_error
        con = self._connect()
        try:
            con.execute("BEGIN IMMEDIATE")
            cur = con.executemany("INSERT OR IGNORE INTO completions (key, backend, model, request, response, "
                                  "created) VALUES (?,?,?,?,?,?)", rows)
            con.execute("COMMIT")
        except (sqlite3.Error, OSError) as exc:
            if con.in_transaction:
                con.execute("ROLLBACK")
            raise fault(self.path, exc) from None
        return max(cur.rowcount, 0)

    def backup(self, target: sqlite3.Connection) -> None:
        """Copy the whole file into ``target`` (SQLite online backup); raises ``sqlite3.Error``."""
        self._connect().backup(target)

    def models(self, backend: str | None = None) -> list[tuple[str, str]]:
        """The (backend, model) pairs recorded, optionally for one backend."""
        sql, args = "SELECT DISTINCT backend, model FROM completions", ()
        if backend is not None:
            sql, args = sql + " WHERE backend = ?", (backend,)
        return sorted(self._run(sql, args))

    def __len__(self) -> int:
        return self._run("SELECT COUNT(*) FROM completions")[0][0]

    def stats(self) -> CacheStats:
        rows = self._run("SELECT backend, model, COUNT(*) FROM completions GROUP BY backend, model")
        by_model = {f"{b}:{m}": n for b, m, n in rows}
        size = sum(p.stat().st_size for p in self.path.parent.glob(self.path.name + "*") if p.is_file())
        return CacheStats(self.path, sum(by_model.values()), size, by_model, self.modes())

    def clear(self) -> int:
        """Delete every entry; return how many were removed."""
        if self.write_error is not None:
            raise self.write_error
        n = len(self)
        self._run("DELETE FROM completions")
        self._run(f"DELETE FROM {_MODES_TABLE}")  # an empty cache holds answers of no mode
        self._marked.clear()
        self._run("VACUUM")
        return n

    def export(self, dest: str | os.PathLike, *, force: bool = False) -> Path:
        """Write a self-contained copy that :meth:`import_file` can merge (see :func:`.transfer.export_cache`)."""
        return export_cache(self, dest, force=force)

    def import_file(self, source: str | os.PathLike, **limits: int) -> ImportReport:
        """Merge the verified rows of an exported cache; the :class:`ImportReport` says what was added and
        what was skipped and why (see :func:`.transfer.import_cache` for the ``limits``)."""
        return import_cache(self, source, **limits)

    def import_from(self, source: str | os.PathLike, **limits: int) -> int:
        """:meth:`import_file`, returning how many entries were new; skipped rows are a warning."""
        report = self.import_file(source, **limits)
        if report.problems():
            warnings.warn(f"{report.source}: {'; '.join(report.problems())}", CacheWarning, stacklevel=2)
        return report.added

    def close(self) -> None:
        con = getattr(self._local, "con", None)
        if con is not None:
            con.close()
            self._local.con = None


_default: CompletionCache | None = None


def default_cache() -> CompletionCache:
    """The process-wide cache at ``cache_dir()/completions.sqlite`` (re-opened if UL_CACHE_DIR changes)."""
    global _default
    path = cache_dir() / FILE_NAME
    if _default is None or _default.path != path:
        _default = CompletionCache(path)
    return _default


_recordings: dict[Path, CompletionCache] = {}


def replay_cache() -> CompletionCache:
    """What replay answers from: the class recording in ``$UL_REPLAY_DIR`` (its ``completions.sqlite``, opened
    read-only: see :meth:`CompletionCache._open_recording`) when that is set, else :func:`default_cache`."""
    env = os.environ.get(REPLAY_ENV)
    if not env:
        return default_cache()
    path = absolute_dir(env) / FILE_NAME
    if path not in _recordings:
        _recordings[path] = CompletionCache(path, recording=True)
    return _recordings[path]
