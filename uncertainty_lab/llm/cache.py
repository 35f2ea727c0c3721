"""One SQLite cache for every completion, content-addressed by backend, model, messages, parameters,
seed and sample index. WAL mode, so several processes (a class, a test run) can share a file."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
"""


def cache_dir() -> Path:
    """Where the package keeps its caches: ``$UL_CACHE_DIR`` or the user cache dir."""
    env = os.environ.get("UL_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("uncertainty-lab"))


def request_key(request: dict[str, Any]) -> str:
    """SHA-256 of the canonical JSON of a request (backend, model, messages, params, seed, index)."""
    blob = json.dumps(request, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CacheStats:
    path: Path
    entries: int
    size_bytes: int
    by_model: dict[str, int]


class CompletionCache:
    """A SQLite file of completions. One connection per thread; writes are idempotent
    (``INSERT OR IGNORE`` on the content key), so concurrent writers cannot corrupt or duplicate."""

    def __init__(self, path: str | os.PathLike | None = None):
        self.path = Path(path) if path is not None else cache_dir() / "completions.sqlite"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        with self._connect() as con:
            con.executescript(_SCHEMA)

    def _connect(self) -> sqlite3.Connection:
        con = getattr(self._local, "con", None)
        if con is None:
            con = sqlite3.connect(self.path.resolve().as_uri(), timeout=60.0, isolation_level=None,
                                  check_same_thread=False, uri=True)
            con.execute("PRAGMA journal_mode=WAL")
            con.execute("PRAGMA synchronous=NORMAL")
            con.execute("PRAGMA busy_timeout=60000")
            self._local.con = con
        return con

    def get(self, key: str) -> dict[str, Any] | None:
        row = self._connect().execute("SELECT response FROM completions WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, request: dict[str, Any], response: dict[str, Any]) -> None:
        self._connect().execute(
            "INSERT OR IGNORE INTO completions (key, backend, model, request, response, created) VALUES (?,?,?,?,?,?)",
            (key, request["backend"], request["model"], json.dumps(request, ensure_ascii=False),
             json.dumps(response, ensure_ascii=False), time.time()),
        )

    def models(self, backend: str | None = None) -> list[tuple[str, str]]:
        """The (backend, model) pairs recorded, optionally for one backend."""
        sql, args = "SELECT DISTINCT backend, model FROM completions", ()
        if backend is not None:
            sql, args = sql + " WHERE backend = ?", (backend,)
        return sorted(self._connect().execute(sql, args).fetchall())

    def __len__(self) -> int:
        return self._connect().execute("SELECT COUNT(*) FROM completions").fetchone()[0]

    def stats(self) -> CacheStats:
        rows = self._connect().execute("SELECT backend, model, COUNT(*) FROM completions GROUP BY backend, model")
        by_model = {f"{b}:{m}": n for b, m, n in rows}
        size = sum(p.stat().st_size for p in self.path.parent.glob(self.path.name + "*") if p.is_file())
        return CacheStats(self.path, sum(by_model.values()), size, by_model)

    def clear(self) -> int:
        """Delete every entry; return how many were removed."""
        con = self._connect()
        n = len(self)
        con.execute("DELETE FROM completions")
        con.execute("VACUUM")
        return n

    def export(self, dest: str | os.PathLike) -> Path:
        """Write a self-contained copy (SQLite online backup) that :meth:`import_from` can merge."""
        dest = Path(dest)
        if dest.resolve() == self.path.resolve():
            raise ValueError(f"export destination {str(dest)!r} is the live cache itself; choose another path")
        dest.parent.mkdir(parents=True, exist_ok=True)
        if dest.exists():
            dest.unlink()
        out = sqlite3.connect(dest)
        try:
            self._connect().backup(out)
            out.execute("PRAGMA journal_mode=DELETE")  # a single self-contained file, readable from read-only media
        finally:
            out.close()
        return dest

    def import_from(self, source: str | os.PathLike) -> int:
        """Merge the entries of another cache file; return how many were new."""
        source = Path(source)
        if not source.is_file():
            raise FileNotFoundError(f"cache file {str(source)!r} does not exist; pass the path of an exported cache")
        con = self._connect()
        before = len(self)
        con.execute("ATTACH DATABASE ? AS other", (f"{source.resolve().as_uri()}?mode=ro",))
        try:
            con.execute("INSERT OR IGNORE INTO completions SELECT * FROM other.completions")
        except sqlite3.DatabaseError as exc:
            raise ValueError(f"{str(source)!r} is not an uncertainty-lab cache export: {exc}") from exc
        finally:
            con.execute("DETACH DATABASE other")
        return len(self) - before

    def close(self) -> None:
        con = getattr(self._local, "con", None)
        if con is not None:
            con.close()
            self._local.con = None


_default: CompletionCache | None = None


def default_cache() -> CompletionCache:
    """The process-wide cache at ``cache_dir()/completions.sqlite`` (re-opened if UL_CACHE_DIR changes)."""
    global _default
    path = cache_dir() / "completions.sqlite"
    if _default is None or _default.path != path:
        _default = CompletionCache(path)
    return _default
