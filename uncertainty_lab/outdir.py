"""The run folder (``out_dir``) every lab writes into: checked before anything runs, locked while a run writes, and
never made to lose a file the lab did not write.

- :func:`check_out_dir` — the folder exists as a folder or can be made, and can be written (a file in its place, a
  dangling link, a link loop or a read-only parent is one error naming ``out_dir`` and the fix); ``--check`` and
  every run call it.
- :class:`OutDirLock` — an advisory lock (``flock``) on ``<out_dir>/.uncertainty_lab.lock`` held while a run
  writes: a second run into the same folder stops at once and names the process that holds it. The operating
  system drops the lock when that process ends, however it ends, so no stale lock is left behind.
- :class:`Manifest` — ``<out_dir>/.uncertainty_lab-files.json`` lists every output the lab wrote with its SHA-256:
  an existing file that is not listed, or was changed since, is not the lab's to replace, and is refused (naming
  it) unless ``overwrite = true``.
- :func:`unit_file_name` — a unit's file name from its id: readable, and injective (ids that differ only in
  punctuation or case never share a file), at most :data:`MAX_NAME` characters.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

try:  # POSIX; elsewhere runs are not locked
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["LOCK_NAME", "MANIFEST_NAME", "MAX_NAME", "Manifest", "OutDirLock", "check_out_dir", "unit_file_name"]

LOCK_NAME = ".uncertainty_lab.lock"
MANIFEST_NAME = ".uncertainty_lab-files.json"
#: the longest unit file name made (characters, before the suffix); file systems allow 255 bytes
MAX_NAME = 80
_SAFE = re.compile(r"[a-z0-9][a-z0-9._-]*")


def unit_file_name(text: str, limit: int = MAX_NAME) -> str:
    """``text`` itself when it is already a safe name (lower-case letters, digits, ``._-``, not starting with a dot,
    at most ``limit``); otherwise a readable slug and ``~`` and 10 hex digits of the SHA-256 of the whole text.
    ``~`` never occurs in a safe name, so two different texts never get one name, whatever their case."""
    text = str(text)
    if len(text) <= limit and _SAFE.fullmatch(text):
        return text
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_.")[: limit - 11] or "x"
    return f"{slug}~{digest}"


class OutDirError(ValueError):
    """``out_dir`` cannot be used: names the folder, why, and the fix."""


def check_out_dir(path: Any, *, what: str = "out_dir", create: bool = False) -> Path:
    """``path`` once it is known to be a folder that exists or can be made, and can be written; ``create`` makes it.
    Nothing is created otherwise (what ``--check`` needs)."""
    if isinstance(path, bytes) or not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
        raise OutDirError(f"{what} must be a folder path (a string), got {path!r:.60}")
    p = Path(path)
    shown = str(p) if len(str(p)) <= 200 else str(p)[:200] + "…"
    fix = f"choose another {what}"
    try:
        if p.is_symlink() and not p.exists():
            raise OutDirError(f"{what} {shown} is a link that points at nothing (or a link loop); remove it or {fix}")
        if p.exists() and not p.is_dir():
            raise OutDirError(f"{what} {shown} is a file, not a folder; {fix} (results go into a folder)")
        probe = p
        while not probe.exists():
            if probe.is_symlink():
                raise OutDirError(f"{what} {shown}: {probe} is a link that points at nothing; {fix}")
            probe = probe.parent
        if not probe.is_dir():
            raise OutDirError(f"{what} {shown}: {probe} is a file, so no folder can be made under it; {fix}")
        if not os.access(probe, os.W_OK | os.X_OK):
            raise OutDirError(f"{what} {shown}: {probe} cannot be written (permission denied); {fix}")
        if create:
            p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a name too long, a link loop inside the path, a vanished parent
        raise OutDirError(f"{what} {shown} cannot be used ({exc.strerror or exc}); {fix}") from None
    return p


class OutDirLock:
    """Hold ``<out_dir>/.uncertainty_lab.lock`` while a run writes (a context manager); a held lock is an
    :class:`OutDirError` naming the process that holds it."""

    def __init__(self, out_dir: str | os.PathLike, what: str = "out_dir"):
        self.path = Path(out_dir) / LOCK_NAME
        self.what = what
        self._fd: int | None = None

    def __enter__(self) -> OutDirLock:
        if fcntl is None:  # pragma: no cover
            return self
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 500, 0).decode("utf-8", "replace").strip() or "another process"
            os.close(fd)
            raise OutDirError(f"{self.what} {self.path.parent} is in use by {holder}; wait for that run to finish, "
                              f"or choose another {self.what} (two runs writing one folder would mix their "
                              "files)") from None
        command = " ".join(sys.argv)[:160] or "python"
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"process {os.getpid()} ({command}), started {time.strftime('%Y-%m-%d %H:%M:%S')}".encode(), 0)
        self._fd = fd
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._fd is not None:
            os.ftruncate(self._fd, 0)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(2**20), b""):
            h.update(block)
    return h.hexdigest()


def _has_journals(folder: Path, limit: int = 50) -> bool:
    """True when one of the first ``limit`` ``.jsonl`` files under ``folder`` starts with a lab's journal header."""
    for i, path in enumerate(folder.glob("**/*.jsonl")):
        if i >= limit:
            break
        try:
            with open(path, "rb") as f:
                head = f.readline(4096)
        except OSError:
            continue
        if head.startswith(b'{"type": "header", "format": "uncertainty_lab.'):
            return True
    return False


class Manifest:
    """The outputs the lab wrote in ``out_dir`` and their SHA-256 (``<out_dir>/.uncertainty_lab-files.json``)."""

    def __init__(self, out_dir: str | os.PathLike):
        self.folder = Path(out_dir)
        self.path = self.folder / MANIFEST_NAME
        self.files: dict[str, str] = {}
        if self.path.is_file() and self.path.stat().st_size < 2**20:
            try:
                data = json.loads(self.path.read_text(encoding="utf-8"))
                self.files = {str(k): str(v) for k, v in data.get("files", {}).items()}
            except (ValueError, AttributeError):
                self.files = {}  # a damaged manifest vouches for nothing

    def foreign(self, paths: list[Path]) -> list[Path]:
        """Those of ``paths`` that exist but are not the lab's: not listed, or changed since it wrote them. A
        see :meth:`adopt` for a folder from before manifests."""
        out = []
        for p in paths:
            if p.exists():
                recorded = self.files.get(p.name)
                if recorded is None or not p.is_file() or _sha256(p) != recorded:
                    out.append(p)
        return out

    def adopt(self) -> Manifest:
        """At the start of a run: a folder from before manifests (none yet, but the lab's run journals in it) has
        its top-level files taken as the lab's, since an older version wrote them; then the manifest is written."""
        if not self.path.exists():
            old = _has_journals(self.folder)
            self.record([p for p in self.folder.iterdir() if old and p.is_file() and not p.name.startswith(".")])
        return self

    def record(self, paths: list[Path]) -> None:
        """Note ``paths`` (just written) as the lab's."""
        for p in paths:
            self.files[p.name] = _sha256(p)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"files": self.files}, indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, self.path)
