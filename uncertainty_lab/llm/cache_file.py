"""Where the completion cache file lives (``$UL_CACHE_DIR``), and what can go wrong with it: each fault of the file
or its folder (damaged, unwritable, a file where the folder should be, locked) becomes one :class:`CacheError`
line that names the file and the fix, decided from what is on disk rather than from SQLite's wording alone."""

from __future__ import annotations

import os
import sqlite3
import warnings
from pathlib import Path

from .errors import LLMError

CACHE_ENV = "UL_CACHE_DIR"
#: a folder holding a class recording (``completions.sqlite``, made by ``cache import``) that replay reads and nothing
#: writes: a class server shares one among every student, each of whom keeps a writable ``UL_CACHE_DIR`` of their own
REPLAY_ENV = "UL_REPLAY_DIR"
FILE_NAME = "completions.sqlite"


class CacheError(LLMError):
    """The completion cache cannot be used as asked (an LLMError: a run reports it as one line). ``fault`` is
    ``"damaged"``, ``"unwritable"``, ``"not a directory"``, ``"not a file"``, ``"locked"``, ``"unusable"`` or
    ``"missing"`` (a class recording that is not there); ``problem`` and ``fix`` make the one-line message."""

    def __init__(self, problem: str, fix: str, *, path: Path, fault: str):
        super().__init__(f"{problem}; {fix}")
        self.problem, self.fix, self.path, self.fault = problem, fix, path, fault


class CacheWarning(UserWarning):
    """The cache is used in part (read-only, a damaged row) or not at all; the run goes on."""


_warned: set[str] = set()


def warn_once(message: str, stacklevel: int = 3) -> None:
    """A :class:`CacheWarning`, once per message per process (a fault repeats on every call)."""
    if message not in _warned:
        _warned.add(message)
        warnings.warn(message, CacheWarning, stacklevel=stacklevel)


def absolute_dir(value: str | os.PathLike) -> Path:
    """A ``UL_CACHE_DIR`` value as an absolute folder: ``~`` expanded, a relative path resolved against the current
    folder, so a kernel or process started in another folder (a notebook's) uses the same cache."""
    return Path(value).expanduser().absolute()


def cache_dir() -> Path:
    """Where the package keeps its caches: ``$UL_CACHE_DIR`` (made absolute) or the user cache dir."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return absolute_dir(env)
    import platformdirs

    return Path(platformdirs.user_cache_dir("uncertainty-lab"))


def where_it_looked(path: Path) -> str:
    """Why the cache is at ``path``: what UL_CACHE_DIR says, resolved, or that it is the default location."""
    env = os.environ.get(CACHE_ENV)
    if path.parent != cache_dir():
        return f"the cache file {path}"
    if env:
        return f"{CACHE_ENV}={env!r}, i.e. {path.parent}"
    return f"the default location {path.parent} ({CACHE_ENV} is not set)"


def _blocking_file(path: Path) -> Path | None:
    """The nearest existing ancestor folder of ``path`` when it is not a folder (so nothing can be made there)."""
    for p in (path.parent, *path.parent.parents):
        if os.path.lexists(p):
            return None if os.path.isdir(p) else p
    return None


def fault(path: Path, exc: BaseException) -> CacheError:
    """The one-line error for a failure (``exc``) to use the cache file at ``path``, from what is on disk."""
    aside = f"move it aside: mv {path} {path}.broken, or set {CACHE_ENV} to another directory"
    blocking = _blocking_file(path)
    if blocking is not None:
        env = os.environ.get(CACHE_ENV, "")
        if env and absolute_dir(env) == blocking:
            return CacheError(f"{CACHE_ENV}={env} is a file, not a directory",
                              f"set {CACHE_ENV} to a directory (or unset it)", path=path, fault="not a directory")
        return CacheError(f"{blocking} is a file, so the cache {path} cannot be made there",
                          f"move that file, or set {CACHE_ENV} to a directory", path=path, fault="not a directory")
    if os.path.lexists(path) and not os.path.isfile(path):
        return CacheError(f"the completion cache {path} is not a regular file", aside, path=path, fault="not a file")
    name = getattr(exc, "sqlite_errorname", "") or ""
    reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    if name.startswith(("SQLITE_NOTADB", "SQLITE_CORRUPT")):
        return CacheError(f"the completion cache {path} is damaged ({reason})", aside, path=path, fault="damaged")
    if isinstance(exc, PermissionError) or name.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM")):
        return CacheError(f"cannot write the completion cache {path} ({reason})",
                          f"make {path.parent} writable, or set {CACHE_ENV} to a writable directory",
                          path=path, fault="unwritable")
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
        return CacheError(f"the completion cache {path} stayed locked by another process ({reason})",
                          f"wait for that process, or set {CACHE_ENV} to another directory", path=path, fault="locked")
    return CacheError(f"cannot use the completion cache {path} ({type(exc).__name__}: {reason})", aside,
                      path=path, fault="unusable")


def connect_read_only(path: Path) -> sqlite3.Connection:
    """A read-only connection that works where the folder is not writable too (a WAL file there needs
    ``immutable=1``). Raises ``sqlite3.Error``."""
    last: sqlite3.Error | None = None
    for query in ("mode=ro", "immutable=1"):
        con = sqlite3.connect(f"{path.as_uri()}?{query}", uri=True, isolation_level=None, check_same_thread=False)
        try:
            con.execute("SELECT count(*) FROM sqlite_master").fetchone()
            con.execute("PRAGMA query_only=ON")
            return con
        except sqlite3.Error as exc:
            con.close()
            last = exc
            if not getattr(exc, "sqlite_errorname", "").startswith(("SQLITE_CANTOPEN", "SQLITE_READONLY")):
                break
    raise last


def connect_recording(path: Path) -> sqlite3.Connection:
    """A connection to a class recording that never writes beside it, whoever opens it: ``immutable=1`` takes no lock
    and makes no ``-wal``/``-shm`` file (``mode=ro`` makes both where it may, root may everywhere), so any number of
    kernels read one file in a read-only folder. A ``-wal`` file beside it that still holds answers (an import not
    yet checkpointed) is read with :func:`connect_read_only` instead. Raises ``sqlite3.Error``."""
    wal = Path(f"{path}-wal")
    if wal.is_file() and wal.stat().st_size > 0:
        return connect_read_only(path)
    con = sqlite3.connect(f"{path.as_uri()}?immutable=1", uri=True, isolation_level=None, check_same_thread=False)
    try:
        con.execute("SELECT count(*) FROM sqlite_master").fetchone()
        con.execute("PRAGMA query_only=ON")
    except BaseException:
        con.close()
        raise
    return con
