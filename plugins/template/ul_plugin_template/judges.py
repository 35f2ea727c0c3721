"""An ``equivalence_judges`` plugin: answers are equal when they are equal ignoring case.

Protocol: ``equivalent(question, a, b) -> bool``. Subclassing
:class:`~uncertainty_lab.semantic.EquivalenceJudge` means implementing ``_judge_uncached(question, pairs)``
(a list of :class:`~uncertainty_lab.semantic.Judgement`, one per pair); the base class adds
``equivalent``, the batched and cached ``judge_pairs`` that clustering and the metrics use, and
``similarity``.
"""

from __future__ import annotations

import string
from dataclasses import dataclass, field
from typing import ClassVar

from uncertainty_lab.contracts import EquivalenceJudge, Judgement

_PUNCTUATION = str.maketrans("", "", string.punctuation)


@dataclass
class CaseInsensitiveJudge(EquivalenceJudge):
    """Equal after case folding and trimming (and, optionally, with runs of whitespace collapsed and ASCII
    punctuation removed). Stricter than the built-in ``exact`` judge, which also drops accents and articles."""

    name: ClassVar[str] = "case_insensitive"
    summary: ClassVar[str] = "equal ignoring case (optionally whitespace and punctuation) (template)"
    reference: ClassVar[str] = "uncertainty-lab plugin template"

    collapse_whitespace: bool = field(default=True, metadata={"help": "treat any run of spaces/newlines as one space"})
    ignore_punctuation: bool = field(default=False, metadata={"help": "remove ASCII punctuation before comparing"})

    def key(self, text: str) -> str:
        """The form two answers are compared in."""
        if self.ignore_punctuation:
            text = text.translate(_PUNCTUATION)
        if self.collapse_whitespace:
            text = " ".join(text.split())
        return text.strip().casefold()

    def _judge_uncached(self, question: str, pairs: list[tuple[str, str]]) -> list[Judgement]:
        out = []
        for a, b in pairs:
            same = self.key(a) == self.key(b)
            out.append(Judgement(a, b, same, float(same)))
        return out
