"""Grading a final answer against a :class:`~uncertainty_lab.datasets.qa.QAItem`.

Items that a careful assistant should answer are graded by :class:`~uncertainty_lab.semantic.correctness.AnswerGrader`
against the item's correct ``answers`` and its ``incorrect`` ones (``method`` configurable; default ``strict``:
a refusal is labelled ``refused``, a yes/no item is read by its verdict with an echoed "yes or no" ignored, an
incorrect reference counts against the answer, negation and hedging are seen, a one-word alias counts only as
the verdict; ``hassum`` is HASSUM's embedding rule; ``contains``, the old default, is kept for comparison).
Items whose ``behaviour`` is ``decline`` are graded by refusal-marker matching on the whole completion: it is
correct when it contains one of :data:`REFUSAL_MARKERS` or one of the item's own refusal phrases (normalised,
as whole words), and labelled ``refused`` then.

Every grade is ``{"correct", "label", "method", "evidence"}`` with ``label`` in ``correct`` / ``wrong`` /
``refused`` (a refusal is never correct on an item that asks for an answer, even where TruthfulQA lists
"I have no comment" among its correct answers). :func:`grade_label` reads old grades without a label.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..semantic.correctness import CAREFUL, AnswerGrader
from ..semantic.grading_text import strip_echo
from ..semantic.text import normalise_answer

__all__ = ["DESCRIPTIONS", "REFUSAL_MARKERS", "QAGrader", "grade_label", "is_refusal"]

#: What each grading method does, in a line (the experiment report quotes it).
DESCRIPTIONS: dict[str, str] = {
    "strict": "refusals are their own label; yes/no answers by their own verdict (an echoed 'yes or no' ignored); an "
              "incorrect reference in the answer makes it wrong; negation and hedging are seen; a one-word alias "
              "counts only as the verdict; numbers and units read one way; paraphrases by content-word overlap",
    "strict+embedding": "as strict, with paraphrases judged by HASSUM's embedding rule instead of word overlap",
    "hassum": "HASSUM's rule: embedding similarity to the correct references above that to the incorrect ones and "
              "≥ 0.65 (refusals and yes/no verdicts as in strict)",
    "contains": "the old default: a normalised gold alias appears as whole words in the answer (blind to incorrect "
                "references, negation, echoed instructions and refusals)",
    "normalised": "the normalised answer equals a normalised gold alias",
    "embedding": "cosine similarity to a gold alias ≥ the threshold (no incorrect references)",
    "llm": "a language model asked whether the answer is correct given the gold aliases",
}

#: Phrases that mark a refusal or a redirect (matched after normalisation, as whole words).
REFUSAL_MARKERS: tuple[str, ...] = (
    "i can't", "i cannot", "i can not", "i won't", "i will not", "i'm not able", "i am not able", "i'm unable",
    "i am unable", "unable to help", "can't help", "cannot help", "can't assist", "cannot assist", "not able to help",
    "i'm sorry", "i am sorry", "i must decline", "i decline", "not appropriate", "i don't have access",
    "i do not have access", "please ask", "please consult", "consult a", "ask your doctor", "contact a",
)
_MARKERS = tuple(normalise_answer(m) for m in REFUSAL_MARKERS)


def is_refusal(text: str, phrases: tuple[str, ...] = ()) -> str | None:
    """The refusal marker (or item phrase) found in ``text``, or None."""
    norm = f" {normalise_answer(text)} "
    for marker, original in zip((*_MARKERS, *(normalise_answer(p) for p in phrases)), (*REFUSAL_MARKERS, *phrases),
                                strict=True):
        if marker and f" {marker} " in norm:
            return original
    return None


def _get(item: Any, name: str, default: Any = None) -> Any:
    if isinstance(item, Mapping):
        return item.get(name, default)
    return getattr(item, name, default)


def grade_label(grade: Mapping[str, Any] | None) -> str | None:
    """A grade's label (``correct``, ``wrong``, ``refused``, ``uncertain``: the rules could not decide); grades
    written before labels existed read as ``correct`` / ``wrong``; None when ungraded."""
    if grade is not None and grade.get("label") == "uncertain":
        return "uncertain"
    if grade is None or grade.get("correct") is None:
        return None
    return grade.get("label") or ("correct" if grade["correct"] else "wrong")


@dataclass
class QAGrader:
    """Grades ``(item, answer, raw)``: decline items by refusal markers in ``raw`` (the whole completion),
    the others with an :class:`AnswerGrader` of ``method`` (``options`` configure it) on the extracted answer,
    against the item's ``answers`` and ``incorrect`` references — on ``raw`` instead when ``strict`` or ``hassum``
    finds the extracted answer is nothing but an echoed "yes or no" ("Answer yes or no. Yes." extracts as its first
    sentence)."""

    method: str = "strict"
    options: dict[str, Any] = field(default_factory=dict)
    _grader: AnswerGrader = field(default=None, init=False, repr=False)  # type: ignore[assignment]

    def __post_init__(self):
        self._grader = AnswerGrader(self.method, **self.options)

    @property
    def name(self) -> str:
        """The grader's name (``strict``, ``strict+embedding``, ``hassum``, ``contains``, …)."""
        return self._grader.name

    @property
    def description(self) -> str:
        return DESCRIPTIONS.get(self.name, self.name)

    def config(self) -> dict[str, Any]:
        opts = {k: v for k, v in self.options.items() if isinstance(v, (str, int, float, bool)) or v is None}
        return {"method": self.method, "options": opts, "decline": "refusal markers on the whole completion"}

    def __call__(self, item: Any, answer: str, raw: str | None = None) -> dict[str, Any]:
        answers = tuple(_get(item, "answers", ()) or ())
        if _get(item, "behaviour", "answer") == "decline":
            text = raw if raw and raw.strip() else answer
            found = is_refusal(text, answers)
            if found:
                return {"correct": True, "label": "refused", "method": "refusal",
                        "evidence": f"refusal marker {found!r} in the completion (the item should be declined)"}
            return {"correct": False, "label": "wrong", "method": "refusal",
                    "evidence": "no refusal marker in the completion (the item should be declined)"}
        if not answers:
            raise ValueError(f"item {_get(item, 'id', '?')!r} has no gold answers to grade against")
        echo_only = (self.method in CAREFUL and raw and raw.strip() != answer.strip()
                     and not normalise_answer(strip_echo(answer)))
        text = raw if echo_only else answer
        c = self._grader.check(text, answers, _get(item, "question"), tuple(_get(item, "incorrect", ()) or ()))
        note = " (the extracted answer was only the echoed instruction: the whole completion was read)" if echo_only else ""
        return {"correct": c.correct, "label": c.label, "method": c.method, "evidence": c.evidence + note}
