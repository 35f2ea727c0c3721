"""What a journalled result depends on, as content hashes: an item's question and its references, a data file,
a grader's settings. A run records them (the journal's header and body records) so that a rerun after an edit of
the data or a change of grader can tell a stale result from a current one: re-grade the recorded answer when only
the references or the grader changed, refuse when the question itself changed (:func:`item_changes`).

    content_hash(x) = first 16 hex digits of sha256(canonical JSON of x)   (keys sorted, UTF-8, no spaces)
    file_hash(path) = first 16 hex digits of sha256(the file's bytes)      (a folder: of its files' paths and hashes)
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

__all__ = ["QUESTION_KEYS", "REFERENCE_KEYS", "StaleResultWarning", "content_hash", "data_files", "file_hash", "grader_settings",
           "item_changes", "item_hashes"]

#: the item fields a recorded answer was given for (a change: the answer is for another question)
QUESTION_KEYS: tuple[str, ...] = ("question",)
#: the item fields an answer is graded against (a change: re-grade the recorded answer)
REFERENCE_KEYS: tuple[str, ...] = ("answers", "incorrect", "behaviour")
_CHUNK = 1 << 20
_MAX_FOLDER_FILES = 10_000


class StaleResultWarning(UserWarning):
    """Recorded results were re-graded (or redone) because what they depend on changed since they were recorded."""


def content_hash(value: Any) -> str:
    """The first 16 hex digits of the sha256 of ``value`` as canonical JSON (see the module doc)."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def file_hash(path: str | os.PathLike) -> str:
    """The first 16 hex digits of the sha256 of a file's bytes (read in chunks); a folder hashes the sorted
    relative paths and hashes of its regular files (at most 10 000). A pipe, device or socket is refused
    before it is opened (:func:`uncertainty_lab.untrusted.check_path`): reading one could block or never end."""
    from .untrusted import open_binary

    path = Path(path)
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if _is_regular(p))[:_MAX_FOLDER_FILES]
        return content_hash([[str(p.relative_to(path)), file_hash(p)] for p in files])
    digest = hashlib.sha256()
    with open_binary(path, what="data file") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()[:16]


def _is_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except OSError:  # a dangling link, a loop, a name too long
        return False


def data_files(path: Any) -> dict[str, str | None]:
    """``{file: hash}`` of a ``data`` setting's ``path`` (a file, a folder or a list of them; None: the package's
    own data, ``{}``); a file that is not there, or not a regular file or folder, hashes as None: the loader
    refuses it and says why."""
    if path is None:
        return {}
    paths = path if isinstance(path, (list, tuple)) else [path]
    return {str(p): file_hash(p) if Path(p).is_dir() or _is_regular(Path(p)) else None for p in paths}


def _get(item: Any, key: str) -> Any:
    return item.get(key) if isinstance(item, Mapping) else getattr(item, key, None)


def item_hashes(item: Any, *, question_keys: Iterable[str] = QUESTION_KEYS,
                reference_keys: Iterable[str] = REFERENCE_KEYS) -> dict[str, str]:
    """``{"question": hash, "references": hash}`` of an item (a dict or an object with those fields): what its
    recorded answer was asked for, and what that answer is graded against."""
    return {"question": content_hash({k: _get(item, k) for k in question_keys}),
            "references": content_hash({k: _get(item, k) for k in reference_keys})}


def item_changes(recorded: Mapping[str, Mapping[str, str]], current: Mapping[str, Mapping[str, str]]
                 ) -> tuple[list[str], list[str]]:
    """``(ids whose question changed, ids whose references alone changed)`` between the recorded and the current
    :func:`item_hashes` by item id (ids in only one of them are left out: the configuration check names them)."""
    asked, refs = [], []
    for key, old in recorded.items():
        new = current.get(key)
        if new is None:
            continue
        if old.get("question") != new.get("question"):
            asked.append(key)
        elif old.get("references") != new.get("references"):
            refs.append(key)
    return asked, refs


def grader_settings(grader: Any) -> Any:
    """What a grader's grades depend on, as JSON values: its ``config()`` when it has one, else its
    :func:`~uncertainty_lab.parameters.settings` (``{"name", "params"}``) when it is a dataclass (a plugin that
    declares parameters), else its name (a function's ``__name__``, as journals before 0.2.1 recorded it); None for
    no grader. The one helper every journal records a grader with."""
    if grader is None:
        return None
    if callable(getattr(grader, "config", None)):
        return grader.config()
    import dataclasses

    if dataclasses.is_dataclass(grader) and not isinstance(grader, type):
        from .parameters import settings

        return settings(grader)
    return getattr(grader, "__name__", type(grader).__name__)
