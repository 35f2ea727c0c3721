"""The completion cache across processes and machines, with one writer: the main process owns the cache; a worker
answers from a cache of its own, merged once per run from a read-only snapshot of the main one, and hands back the
rows it added, which the main process merges (``put_many``, insert-or-ignore: nothing is duplicated). No SQLite
file is ever shared between machines.

    main     :func:`take_snapshot` (an export of the cache: one self-contained file), :func:`merge_rows`
    worker   :func:`use_worker_cache` (``$UL_CACHE_DIR`` → a folder of this process, the snapshot merged in once)
             returns a mark; :func:`rows_after` reads the rows added since
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import uuid
import warnings
from dataclasses import dataclass
from pathlib import Path

from ..llm.cache import CompletionCache, default_cache
from ..llm.cache_file import CACHE_ENV, FILE_NAME, CacheError, CacheWarning, connect_read_only
from ..llm.transfer import COLUMNS, export_cache

__all__ = ["Snapshot", "merge_rows", "rows_after", "take_snapshot", "use_worker_cache"]


@dataclass(frozen=True)
class Snapshot:
    """A read-only copy of the main cache for one run: its ``id`` and ``path`` (None: the cache was empty or
    could not be read, and the workers start empty)."""

    id: str
    path: Path | None = None

    def payload(self) -> bytes | None:
        """The file's bytes (what a cluster sends to its workers)."""
        return None if self.path is None else self.path.read_bytes()


def take_snapshot(folder: Path) -> Snapshot:
    """Export the main process's cache (``$UL_CACHE_DIR``) into ``folder``; an empty or unreadable cache gives a
    snapshot without a file (with a warning when unreadable)."""
    snap_id = uuid.uuid4().hex
    try:
        cache = default_cache()
        if len(cache) == 0:
            return Snapshot(snap_id)
        return Snapshot(snap_id, export_cache(cache, folder / f"snapshot-{snap_id}.sqlite"))
    except (CacheError, OSError) as exc:
        warnings.warn(f"{exc}: the workers start without the cached answers", CacheWarning, stacklevel=2)
        return Snapshot(snap_id)


def merge_rows(rows: list[tuple]) -> int:
    """Add a worker's rows to the main process's cache; how many were new (a cache that cannot be written: a
    warning, and the answers stay in the journals)."""
    if not rows:
        return 0
    try:
        return default_cache().put_many(rows)
    except CacheError as exc:
        warnings.warn(f"{exc}: the workers' new answers were not cached", CacheWarning, stacklevel=2)
        return 0


_WORKER: dict[str, object] = {"dir": None, "seen": set()}


def _worker_dir() -> Path:
    """This process's own cache folder (made once, removed when the process exits)."""
    if _WORKER["dir"] is None:
        folder = Path(tempfile.mkdtemp(prefix="ul-worker-cache-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        _WORKER["dir"] = folder
    return _WORKER["dir"]  # type: ignore[return-value]


def use_worker_cache(snapshot_id: str, source: str | os.PathLike | bytes | None) -> int:
    """Point this worker process's default cache at its own file, merge the snapshot into it (once per snapshot:
    ``source`` is the export's path on a shared disk or its bytes) and return the mark after which rows are new."""
    folder = _worker_dir()
    os.environ[CACHE_ENV] = str(folder)
    cache = default_cache()
    seen: set = _WORKER["seen"]  # type: ignore[assignment]
    if snapshot_id not in seen and source is not None:
        path = Path(source) if not isinstance(source, bytes) else folder / f"snapshot-{snapshot_id}.sqlite"
        if isinstance(source, bytes):
            path.write_bytes(source)
        cache.import_file(path, max_rows=10**9, max_bytes=1 << 40)
        if isinstance(source, bytes):
            path.unlink()
    seen.add(snapshot_id)
    return _last_rowid(cache)


def _last_rowid(cache: CompletionCache) -> int:
    con = connect_read_only(cache.path)
    try:
        return int(con.execute("SELECT coalesce(max(rowid), 0) FROM completions").fetchone()[0])
    finally:
        con.close()


def rows_after(mark: int) -> list[tuple]:
    """The rows ``(key, backend, model, request, response, created)`` this worker's cache gained after ``mark``."""
    path = Path(os.environ[CACHE_ENV]) / FILE_NAME
    con = connect_read_only(path)
    try:
        return con.execute(f"SELECT {', '.join(COLUMNS)} FROM completions WHERE rowid > ? ORDER BY rowid",
                           (mark,)).fetchall()
    finally:
        con.close()
