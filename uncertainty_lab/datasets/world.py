"""The ``world`` data loader: the data a world with a known truth supplies to its lab (``uncertainty_lab.worlds``).

    data = {loader = "world", world = "search_efficient"}      # a shipped world's name
    data = {loader = "world", path = "my_world.toml"}          # or a world file

A world kind that supplies data has ``data(limit=, sample=, seed=)``; a search world returns ``(documents,
questions)`` like ``shipped_search``, a cascade world its events (NewsEvents with their truth) like ``shipped_news``, a QA world its questions
(QAItems) like ``shipped_qa``. In a search config, ``data = "world"`` with ``llm = "world:<name>"`` takes
the world from ``llm``.
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["load_world_data"]


def load_world_data(path: str | os.PathLike[str] | None = None, *, world: str | None = None,
                    limit: int | None = None, sample: int | None = None, seed: int = 0,
                    max_bytes: int | None = None) -> Any:
    """The data of the world ``world`` names (a shipped world) or ``path`` holds (a world file), one of the two
    (``max_bytes`` is accepted like every loader's; a world file is read with the worlds' own cap,
    ``MAX_WORLD_BYTES``)."""
    from uncertainty_lab.worlds import load_world

    if (path is None) == (world is None):
        raise ValueError("name the world once: data = {loader = \"world\", world = \"<shipped name>\"} or "
                         "{loader = \"world\", path = \"<world file>\"}" + (" (not both)" if path is not None else ""))
    w = load_world(world if world is not None else path)
    supply = getattr(w, "data", None)
    if not callable(supply):
        raise ValueError(f"world {w.name!r} (kind {w.kind}) supplies no data set")
    return supply(limit=limit, sample=sample, seed=seed)
