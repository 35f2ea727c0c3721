"""How far a grader agrees with hand labels: accuracy, Cohen's κ and the confusion counts over the three labels
``correct`` / ``wrong`` / ``refused``, for every grader on a labelled audit set (the shipped one:
:func:`uncertainty_lab.datasets.load_grader_audit`).

Cohen's κ = (p_o − p_e) / (1 − p_e): p_o the share of answers where grader and hand label agree, p_e the share
expected by chance from the two label distributions, Σ_k p_hand(k) · p_grader(k). κ = 1 is perfect agreement,
0 is chance; undefined (NaN) when both put every answer in one label. κ itself is computed in one place,
:func:`uncertainty_lab.semantic.agreement.cohen_kappa` (weighted, for stratified samples, and with its interval).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..table import Table
from .agreement import kappa_from_confusion, weighted_confusion
from .correctness import LABELS, AnswerGrader

__all__ = ["AUDIT_GRADERS", "Agreement", "agreement", "audit_graders", "audit_table", "disagreements"]

#: The graders the audit compares, by name: the old default first, the new default (``strict``) last but one.
AUDIT_GRADERS: dict[str, dict[str, Any]] = {
    "contains (old default)": {"method": "contains"},
    "normalised": {"method": "normalised"},
    "embedding ≥ 0.8": {"method": "embedding"},
    "hassum (HASSUM's rule)": {"method": "hassum"},
    "strict (default)": {"method": "strict"},
    "strict+embedding": {"method": "strict", "paraphrase": "embedding"},
}
#: The graders that need no embedding model (fast; what the tests pin).
LEXICAL = ("contains (old default)", "normalised", "strict (default)")


@dataclass(frozen=True)
class Agreement:
    """A grader's agreement with the hand labels: ``n``, ``accuracy`` (share of equal labels), Cohen's ``kappa``
    and ``confusion[hand][grader]`` counts over ``labels``."""

    name: str
    n: int
    accuracy: float
    kappa: float
    confusion: dict[str, dict[str, int]] = field(default_factory=dict)
    labels: tuple[str, ...] = LABELS

    def row(self) -> dict[str, Any]:
        """One table row: the grader, n, accuracy, κ, then ``hand→grader`` counts for every pair of labels."""
        out: dict[str, Any] = {"grader": self.name, "n": self.n, "accuracy": round(self.accuracy, 3),
                               "kappa": round(self.kappa, 3) if math.isfinite(self.kappa) else math.nan}
        for h in self.labels:
            for g in self.labels:
                out[f"{h}→{g}"] = self.confusion[h][g]
        return out


def agreement(hand: Sequence[str], graded: Sequence[str], *, name: str = "grader",
              labels: Sequence[str] = LABELS, weights: Sequence[float] | None = None) -> Agreement:
    """Agreement of ``graded`` labels with the ``hand`` labels (module doc); a label outside ``labels`` (e.g.
    ``unjudged``) counts as a disagreement and is not a column. ``weights`` (one per answer: the design weights of a
    stratified sample, :func:`~.agreement.stratum_weights`) weight ``accuracy`` and ``kappa``
    (:func:`~.agreement.cohen_kappa`, the package's one κ); ``confusion`` counts answers, unweighted."""
    if len(hand) != len(graded):
        raise ValueError(f"hand ({len(hand)}) and graded ({len(graded)}) must have the same length")
    if not hand:
        raise ValueError("no answers to compare")
    counts = weighted_confusion(hand, graded, labels=labels)  # checks the hand labels
    confusion = {h: {g: int(counts[i, j]) for j, g in enumerate(labels)} for i, h in enumerate(labels)}
    weighted = counts if weights is None else weighted_confusion(hand, graded, labels=labels, weights=weights)
    p_o = float(np.trace(weighted[:, :len(labels)]) / weighted.sum())
    return Agreement(name, len(hand), p_o, kappa_from_confusion(weighted), confusion, tuple(labels))


def _default_items() -> list[Any]:
    from ..datasets.audit import load_grader_audit

    return load_grader_audit()


def _grade(grader: AnswerGrader, items: Sequence[Any]) -> list[str]:
    results = grader.check_many([it.answer for it in items], [it.references for it in items],
                                [it.question for it in items], [it.incorrect for it in items])
    return [r.label for r in results]


def audit_graders(graders: Mapping[str, Any] | Sequence[str] | None = None, items: Sequence[Any] | None = None, *,
                  embedder: Any = None) -> list[Agreement]:
    """The :class:`Agreement` of each grader with the hand labels of ``items`` (default: the shipped audit set).
    ``graders``: ``{name: AnswerGrader options or an AnswerGrader}``, or names from :data:`AUDIT_GRADERS`
    (default: all of them); ``embedder`` is shared by the graders that embed."""
    items = _default_items() if items is None else list(items)
    if graders is None:
        graders = AUDIT_GRADERS
    elif not isinstance(graders, Mapping):
        unknown = [g for g in graders if g not in AUDIT_GRADERS]
        if unknown:
            raise ValueError(f"unknown grader(s) {unknown}; choose from {list(AUDIT_GRADERS)} or pass a dict")
        graders = {g: AUDIT_GRADERS[g] for g in graders}
    out = []
    hand = [it.label for it in items]
    for name, spec in graders.items():
        grader = spec if isinstance(spec, AnswerGrader) else AnswerGrader(**dict(spec))
        if embedder is not None and grader.needs_embedder() and grader.embedder is None:
            grader.embedder = embedder
        out.append(agreement(hand, _grade(grader, items), name=name))
    return out


def audit_table(results: Sequence[Agreement], title: str = "") -> Table:
    """The agreements as a :class:`~uncertainty_lab.table.Table`."""
    rows = [r.row() for r in results]
    return Table(rows, title=title or f"grader agreement with our hand labels ({results[0].n} answers)")


def disagreements(grader: AnswerGrader, items: Sequence[Any] | None = None) -> Table:
    """The audit answers on which ``grader`` and the hand label differ, with the grader's evidence."""
    items = _default_items() if items is None else list(items)
    results = grader.check_many([it.answer for it in items], [it.references for it in items],
                                [it.question for it in items], [it.incorrect for it in items])
    rows = [{"id": it.id, "failure mode": it.failure_mode, "answer": it.answer, "hand": it.label,
             "grader": r.label, "evidence": r.evidence} for it, r in zip(items, results, strict=True)
            if r.label != it.label]
    return Table(rows, columns=["id", "failure mode", "answer", "hand", "grader", "evidence"],
                 title=f"{grader.name}: {len(rows)} disagreement(s) with the hand labels")
