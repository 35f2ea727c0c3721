"""A ``graders`` plugin: an answer is right when its first words are a correct reference.

Protocol: ``grade(answer, correct, incorrect=(), question=None) -> Correctness``. Subclassing
:class:`~uncertainty_lab.contracts.Grader` means implementing ``decide(answer, norm, correct, incorrect, question)``
(``norm``: the normalised answer, never empty); the base class checks the references and grades an empty answer
wrong. A :class:`~uncertainty_lab.contracts.Correctness` with ``correct=None, uncertain=True`` says the grader
cannot decide: every summary counts it under its own label ``uncertain``, never as wrong.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from uncertainty_lab.contracts import Correctness, Grader
from uncertainty_lab.semantic.text import normalise_answer


@dataclass
class FirstWordsGrader(Grader):
    """Right when the answer's first ``n_words`` words (normalised) are a correct reference, wrong when they are an
    incorrect one; otherwise uncertain, or wrong with ``unsure_is_wrong``. A toy: it cannot read a paraphrase."""

    name: ClassVar[str] = "first_words"
    summary: ClassVar[str] = "the answer's first words are a correct reference (template)"
    reference: ClassVar[str] = "uncertainty-lab plugin template"
    reads_incorrect: ClassVar[bool] = True

    n_words: int = field(default=3, metadata={"min": 1, "max": 20, "step": 1,
                                              "help": "how many of the answer's first words are compared"})
    unsure_is_wrong: bool = field(default=False, metadata={"help": "grade an answer that matches no reference "
                                                                   "wrong instead of uncertain"})

    def decide(self, answer, norm, correct, incorrect, question):
        head = norm.split()[: self.n_words]
        for refs, verdict in ((correct, True), (incorrect, False)):
            for ref in refs:
                words = normalise_answer(ref).split()
                if words and head[: len(words)] == words:
                    return Correctness(verdict, self.name, f"the first words {' '.join(head)!r} start with {ref!r}",
                                       ref if verdict else None)
        if self.unsure_is_wrong:
            return Correctness(False, self.name, f"the first words {' '.join(head)!r} match no reference")
        return Correctness(None, self.name, f"the first words {' '.join(head)!r} match no reference",
                           uncertain=True)
