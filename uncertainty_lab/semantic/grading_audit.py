"""How far a grader agrees with hand labels: accuracy, Cohen's κ and the confusion counts over the three labels
``correct`` / ``wrong`` / ``refused``, for every grader on a labelled audit set (the shipped one:
:func:`uncertainty_lab.datasets.load_grader_audit`). A grader is any ``graders`` plugin (a name, a
``{"name", **params}`` table, an instance: ``registry.resolve("graders", ...)``); where it says ``uncertain`` the
answer counts as a disagreement and the row reports how many (``uncertain``).

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
from .correctness import LABELS, as_grader
from .grades import grade_many

__all__ = ["AUDIT_GRADERS", "Agreement", "agreement", "audit_graders", "audit_table", "disagreements", "make_grader"]

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
    uncertain: int = 0

    def row(self) -> dict[str, Any]:
        """One table row: the grader, n, accuracy, κ, how many it graded ``uncertain``, then ``hand→grader`` counts
        for every pair of labels."""
        out: dict[str, Any] = {"grader": self.name, "n": self.n, "accuracy": round(self.accuracy, 3),
                               "kappa": round(self.kappa, 3) if math.isfinite(self.kappa) else math.nan,
                               "uncertain": self.uncertain}
        for h in self.labels:
            for g in self.labels:
                out[f"{h}→{g}"] = self.confusion[h][g]
        return out


def agreement(hand: Sequence[str], graded: Sequence[str], *, name: str = "grader",
              labels: Sequence[str] = LABELS, weights: Sequence[float] | None = None) -> Agreement:
    """Agreement of ``graded`` labels with the ``hand`` labels (module doc); a label outside ``labels`` (``uncertain``,
    ``unjudged``) counts as a disagreement and is not a column; ``uncertain`` ones are counted. ``weights`` (one per answer: the design weights of a
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
    return Agreement(name, len(hand), p_o, kappa_from_confusion(weighted), confusion, tuple(labels),
                     sum(g == "uncertain" for g in graded))


def _default_items() -> list[Any]:
    from ..datasets.audit import load_grader_audit

    return load_grader_audit()


def _grade(grader: Any, items: Sequence[Any]) -> list[Any]:
    return grade_many(grader, [it.answer for it in items], [it.references for it in items],
                      [it.incorrect for it in items], [it.question for it in items])


def make_grader(spec: Any, *, what: str = "grader") -> Any:
    """The grader a name or spec means here: a name of :data:`AUDIT_GRADERS`, or anything
    :func:`~uncertainty_lab.semantic.correctness.as_grader` takes (a registered grader's name, a
    ``{"name", **params}`` table, the older ``{"method", ...}`` options, an instance)."""
    if isinstance(spec, str) and spec in AUDIT_GRADERS:
        spec = AUDIT_GRADERS[spec]
    return as_grader(spec, what=what)


def audit_graders(graders: Mapping[str, Any] | Sequence[str] | None = None, items: Sequence[Any] | None = None, *,
                  embedder: Any = None) -> list[Agreement]:
    """The :class:`Agreement` of each grader with the hand labels of ``items`` (default: the shipped audit set).
    ``graders``: ``{row name: a grader spec}`` (a grader name, a ``{"name", **params}`` table, the older
    ``AnswerGrader`` options, or an instance), or a list of names — of :data:`AUDIT_GRADERS` or of any registered
    grader (default: all of :data:`AUDIT_GRADERS`); ``embedder`` is shared by the graders that embed."""
    items = _default_items() if items is None else list(items)
    if graders is None:
        graders = AUDIT_GRADERS
    elif not isinstance(graders, Mapping):
        graders = {g: g for g in graders}
    out = []
    hand = [it.label for it in items]
    for name, spec in graders.items():
        try:
            grader = make_grader(spec, what=f"graders[{name!r}]")
        except LookupError as exc:
            raise ValueError(f"unknown grader {name!r} ({exc}); the audit's own rows are {list(AUDIT_GRADERS)}") from exc
        needs = getattr(grader, "needs_embedder", None)
        if embedder is not None and callable(needs) and needs() and getattr(grader, "embedder", 0) is None:
            grader.embedder = embedder
        out.append(agreement(hand, [r.label for r in _grade(grader, items)], name=name))
    return out


def audit_table(results: Sequence[Agreement], title: str = "") -> Table:
    """The agreements as a :class:`~uncertainty_lab.table.Table`."""
    rows = [r.row() for r in results]
    return Table(rows, title=title or f"grader agreement with our hand labels ({results[0].n} answers)")


def disagreements(grader: Any, items: Sequence[Any] | None = None) -> Table:
    """The audit answers on which ``grader`` (a grader or a spec, as in :func:`make_grader`) and the hand label
    differ, with the grader's evidence."""
    items = _default_items() if items is None else list(items)
    grader = make_grader(grader)
    results = _grade(grader, items)
    rows = [{"id": it.id, "failure mode": it.failure_mode, "answer": it.answer, "hand": it.label,
             "grader": r.label, "evidence": r.evidence} for it, r in zip(items, results, strict=True)
            if r.label != it.label]
    return Table(rows, columns=["id", "failure mode", "answer", "hand", "grader", "evidence"],
                 title=f"{getattr(grader, 'label', None) or grader.name}: {len(rows)} disagreement(s) with the hand "
                       "labels")
