"""What a grader returns (:class:`Correctness`) and the base of every ``graders`` plugin (:class:`Grader`).

A grader decides whether one answer is right given the correct references, the incorrect ones and the question:
``grade(answer, correct, incorrect=(), question=None) -> Correctness``. Every grading has a :attr:`~Correctness.label`
among :data:`GRADE_LABELS`: ``correct``, ``wrong``, ``refused`` (the answer declines; never correct) or
``uncertain`` (the grader could not decide: an LLM judge said "unsure" or gave a reply that could not be read, or a
rule found the answer undecidable). An uncertain grading has ``correct=None``; it is counted under its own label in
every summary (:func:`label_counts`), never dropped in silence nor counted as wrong.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from .text import normalise_answer

__all__ = ["GRADE_LABELS", "Correctness", "Grader", "grade_many", "label_counts", "references"]

#: every label a grading can have (``unjudged``: an old grading with ``correct=None`` and no ``uncertain`` flag)
GRADE_LABELS: tuple[str, ...] = ("correct", "wrong", "refused", "uncertain")


@dataclass(frozen=True)
class Correctness:
    """A grading: ``correct`` (None when ``uncertain``: the grader could not decide), the grader (``method``), a
    human-readable ``evidence``, the reference that ``matched``, a ``score`` (cosine or F1), an LLM judge's ``raw``
    reply, whether the answer ``refused`` (then ``correct`` is False) and whether the grader was ``uncertain``."""

    correct: bool | None
    method: str
    evidence: str
    matched: str | None = None
    score: float | None = None
    raw: str | None = None
    refused: bool = False
    uncertain: bool = False

    def __post_init__(self):
        if self.uncertain and self.correct is not None:
            raise ValueError(f"an uncertain grading has correct=None, got correct={self.correct!r}")

    @property
    def judged(self) -> bool:
        return self.correct is not None

    @property
    def label(self) -> str:
        """``correct``, ``wrong``, ``refused``, ``uncertain`` (or ``unjudged``: ``correct`` None, not flagged)."""
        if self.refused:
            return "refused"
        if self.uncertain:
            return "uncertain"
        return "unjudged" if self.correct is None else ("correct" if self.correct else "wrong")


def label_counts(results: Sequence[Correctness | str | None]) -> dict[str, int]:
    """How many gradings have each label: every one of :data:`GRADE_LABELS` (0 when absent), plus ``unjudged``
    and any other label only when present. ``results`` holds gradings, labels, or None (counted as unjudged)."""
    labels = [r if isinstance(r, str) else ("unjudged" if r is None else r.label) for r in results]
    counts = Counter(labels)
    out = {k: counts.pop(k, 0) for k in GRADE_LABELS}
    out.update(sorted(counts.items()))
    return out


def references(refs: Sequence[str] | str, what: str = "gold_aliases") -> list[str]:
    """The correct references as a checked list: at least one, each a string that is not empty after
    normalisation (an error naming ``what`` and the fix otherwise)."""
    aliases = [refs] if isinstance(refs, str) else list(refs)
    if not aliases:
        raise ValueError(f"{what} is empty; give at least one correct answer")
    for i, a in enumerate(aliases):
        if not isinstance(a, str):
            raise ValueError(f"{what}[{i}] must be a string, got {type(a).__name__}")
        if not normalise_answer(a):
            raise ValueError(f"{what}[{i}] = {a!r} is empty after normalisation; fix the gold data")
    return aliases


def _incorrect(refs: Sequence[str] | str | None) -> list[str]:
    return [w for w in ([refs] if isinstance(refs, str) else list(refs or ()))
            if isinstance(w, str) and normalise_answer(w)]


class Grader:
    """Base of the ``graders`` plugins: checks the input once (:meth:`grade`), then calls :meth:`decide`.

    A subclass is a dataclass whose fields are its parameters (``metadata``: ``min``, ``max``, ``choices``,
    ``help``), sets ``name`` and ``summary``, and implements ``decide(answer, norm, correct, incorrect, question)``
    (``norm``: the normalised answer, never empty). ``reads_incorrect``: whether it uses the incorrect references
    and labels refusals (the careful graders). A plugin need not subclass this: ``grade`` is all the registry asks.
    """

    name: ClassVar[str] = "grader"
    summary: ClassVar[str] = ""
    reference: ClassVar[str] = ""
    reads_incorrect: ClassVar[bool] = False

    @property
    def label(self) -> str:
        """The name a grading records as its ``method`` (a variant may add to :attr:`name`)."""
        return self.name

    def needs_embedder(self) -> bool:
        return False

    def grade(self, answer: str, correct: Sequence[str] | str, incorrect: Sequence[str] | str = (),
              question: str | None = None) -> Correctness:
        """Grade one answer against its ``correct`` references (and ``incorrect`` ones, read by the careful
        graders); an answer that normalises to nothing is wrong, with evidence saying so."""
        if not isinstance(answer, str):
            raise ValueError(f"answer must be a string, got {type(answer).__name__}")
        aliases = references(correct)
        norm = normalise_answer(answer)
        if not norm:
            return Correctness(False, self.label, f"empty answer {answer!r} after normalisation; check answer extraction")
        return self.decide(answer, norm, aliases, _incorrect(incorrect), question)

    def decide(self, answer: str, norm: str, correct: list[str], incorrect: list[str],
               question: str | None) -> Correctness:
        raise NotImplementedError

    def prepare(self, texts: Sequence[str]) -> None:
        """Called by :func:`grade_many` with every answer and reference before grading (an embedding grader
        encodes them in one batch)."""


def grade_many(grader: Any, answers: Sequence[str], correct: Sequence[Sequence[str] | str],
               incorrect: Sequence[Sequence[str] | str] | None = None,
               questions: Sequence[str | None] | None = None) -> list[Correctness]:
    """``grader.grade`` of answers[i] against correct[i] (incorrect[i], questions[i]); lengths must agree. A
    grader with ``prepare`` gets every text first (one embedding batch)."""
    n = len(answers)
    if len(correct) != n or (questions is not None and len(questions) != n) or (incorrect is not None
                                                                                and len(incorrect) != n):
        raise ValueError(f"answers ({n}), golds ({len(correct)})"
                         + (f", questions ({len(questions)})" if questions is not None else "")
                         + (f", incorrect ({len(incorrect)})" if incorrect is not None else "")
                         + " must have the same length")
    wrongs = incorrect if incorrect is not None else [()] * n
    if callable(getattr(grader, "prepare", None)):
        texts = [a for a in answers if isinstance(a, str)]
        texts += [g for gs in (*correct, *wrongs) for g in ([gs] if isinstance(gs, str) else gs) if isinstance(g, str)]
        grader.prepare(list(dict.fromkeys(texts)))
    qs = questions if questions is not None else [None] * n
    return [grader.grade(a, g, w, q) for a, g, q, w in zip(answers, correct, qs, wrongs, strict=True)]
