"""The questions of a QA world (:mod:`uncertainty_lab.worlds.qa`) as :class:`~.qa.QAItem` s, so the orchestration lab
reads them like any data set: ``data = {loader = "world", world = "calibrated"}`` (or ``path`` = a world file)."""

from __future__ import annotations

import os

from uncertainty_lab.datasets.files import DEFAULT_MAX_BYTES
from uncertainty_lab.datasets.qa import QAItem
from uncertainty_lab.datasets.subset import check_subset, take

__all__ = ["load_world_questions"]


def load_world_questions(path: str | os.PathLike[str] | None = None, *, world: str | None = None,
                         limit: int | None = None, sample: int | None = None, seed: int = 0,
                         max_bytes: int | None = DEFAULT_MAX_BYTES) -> list[QAItem]:
    """The questions of the QA world ``world`` (a shipped name) or of the world file at ``path`` (``max_bytes`` is the
    world reader's own cap); ``limit`` / ``sample`` / ``seed`` choose among them."""
    from uncertainty_lab.worlds import load_world

    if (path is None) == (world is None):
        raise ValueError("give the world's name (world = \"calibrated\") or its file (path = ...), exactly one")
    check_subset(limit, sample, seed)
    w = load_world(world if path is None else path)
    items = getattr(w, "items", None)
    if w.kind != "qa" or not callable(items):
        raise ValueError(f"world {w.name!r} is of kind {w.kind!r}; only a qa world has questions for this lab")
    return take(items(), limit=limit, sample=sample, seed=seed)
