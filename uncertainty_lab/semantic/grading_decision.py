"""The result every grading rule returns (:class:`Decision`), in a module of its own so the rule modules
(:mod:`.grading_rules`, :mod:`.grading_yesno`) share it without importing each other."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["Decision", "Similarity"]

Similarity = Callable[[str, Sequence[str]], list[float]]


@dataclass(frozen=True)
class Decision:
    """A grading: ``label`` (``correct``, ``wrong``, ``refused`` or ``uncertain``: the rules cannot decide), the
    ``evidence``, the reference that
    ``matched`` and a ``score`` (F1 or cosine) where one was used."""

    label: str
    evidence: str
    matched: str | None = None
    score: float | None = None
