"""The request log: with ``$UL_REQUEST_LOG`` naming a file, every request that goes through the completion cache of
:class:`~.base.LLMBackend` is appended to it as one JSON line (its cache key, or null when it was not cached, and what
it asked), so a recording run (``make tour``) can check afterwards that the cache holds every answer a replay of the
same notebooks will ask for. Backends that answer without a cache (a script, the search lab's oracle) need no
recording and are not logged. A line costs microseconds; a second, replaying run of the notebooks would cost the tour.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REQUEST_LOG_ENV = "UL_REQUEST_LOG"
SHOWN = 5  # requests named in a summary, at most

__all__ = ["REQUEST_LOG_ENV", "RecordingCheck", "check_recording", "describe_request", "log_request"]


def describe_request(request: dict[str, Any]) -> str:
    """One line naming a request: backend, model, sample, seed and the start of its last message."""
    text = request["messages"][-1]["content"][:60]
    return (f"{request['backend']}:{request['model']} sample {request['index']} (seed={request['seed']}) "
            f"to {text!r}")


def log_request(request: dict[str, Any], key: str | None) -> None:
    """Append ``request`` with its cache ``key`` to the file ``$UL_REQUEST_LOG`` names (nothing when unset); ``key``
    is None for a request that was not cached (``seed=None``, ``use_cache=False``, a cache that could not be
    opened). A log that cannot be written is an ``OSError`` naming it: a recording that silently stopped logging
    would pass its check."""
    path = os.environ.get(REQUEST_LOG_ENV)
    if not path:
        return
    line = json.dumps({"key": key, "what": describe_request(request)}, ensure_ascii=False) + "\n"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode("utf-8"))  # one write of an O_APPEND file: lines of parallel writers never mix
        finally:
            os.close(fd)
    except OSError as exc:
        raise OSError(f"cannot append to the request log {path} ({REQUEST_LOG_ENV}): {exc.strerror or exc}; "
                      f"unset {REQUEST_LOG_ENV} or point it at a writable file") from None


@dataclass(frozen=True)
class RecordingCheck:
    """What a request log says about a cache: ``requests`` distinct cached requests were made, ``missing`` of
    them (described) are not in the cache at ``cache``, and ``uncached`` requests were not cached at all."""

    log: Path
    cache: Path
    requests: int
    missing: list[str] = field(default_factory=list)
    uncached: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.missing and not self.uncached

    def summary(self) -> str:
        """One line when complete; else the counts, a few of the requests and what to do."""
        if self.ok:
            return f"recording complete: all {self.requests} requests the notebooks made are in {self.cache}"
        lines = []
        if self.missing:
            lines.append(f"recording incomplete: {len(self.missing)} of the {self.requests} requests the notebooks "
                         f"made are not in {self.cache} (a kernel wrote another cache, or could not write this one):")
            lines += [f"  {what}" for what in self.missing[:SHOWN]]
        if self.uncached:
            lines.append(f"{len(self.uncached)} requests were not cached (seed=None, use_cache=False, or a cache "
                         "that could not be opened: see the warnings), so replay mode cannot answer them:")
            lines += [f"  {what}" for what in self.uncached[:SHOWN]]
        lines.append(f"(every request is listed in {self.log})")
        return "\n".join(lines)


def check_recording(log: str | os.PathLike, cache: Any) -> RecordingCheck:
    """Compare the request log at ``log`` with ``cache`` (a :class:`~.cache.CompletionCache`): which logged requests
    it cannot answer. A log that does not exist holds no request."""
    log = Path(log)
    keys: dict[str, str] = {}
    uncached: list[str] = []
    if log.is_file():
        for line in log.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            entry = json.loads(line)
            if entry["key"] is None:
                uncached.append(entry["what"])
            else:
                keys.setdefault(entry["key"], entry["what"])
    missing = [what for key, what in keys.items() if cache.get(key) is None]
    return RecordingCheck(log=log, cache=Path(cache.path), requests=len(keys), missing=missing,
                          uncached=uncached)
