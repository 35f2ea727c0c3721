"""The built-in rule and embedding graders (``graders`` plugins), one class per grader:

- ``strict`` (the labs' default): a careful reader's rules (:mod:`.grading_rules`): refusals get their own label,
  yes/no items are read by their verdict, the incorrect references count against the answer, negation and hedging
  are seen; paraphrases by word overlap (``paraphrase="embedding"``: by HASSUM's rule).
- ``hassum``: HASSUM's rule — embedding similarity to the correct references above that to the incorrect ones and
  ≥ ``floor`` (0.65) — behind the same refusal and yes/no steps.
- ``normalised``: the normalised answer equals a normalised reference (SQuAD-style exact match).
- ``contains``: a normalised reference appears as whole words in the normalised answer (the old default; blind to
  negation, a second wrong answer, an echoed "yes or no" and refusals).
- ``embedding``: cosine similarity of the answer and a reference ≥ ``threshold`` (topical closeness, not factual
  identity: "Sydney"/"Canberra" score 0.70).

The LLM judge (``llm``) is in :mod:`.llm_judge`. A rule's ``Decision`` becomes a :class:`Correctness` in
:func:`from_decision`: its label ``uncertain`` (an undecidable answer) gives ``correct=None, uncertain=True``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import numpy as np

from .grades import Correctness, Grader
from .grading_rules import Decision, hassum_rule, strict_rule
from .text import normalise_answer

__all__ = ["ContainsGrader", "EmbeddingGrader", "HassumGrader", "NormalisedGrader", "StrictGrader", "from_decision"]

_EMBEDDER = {"hidden": True, "help": "the sentence embedder (default: the shipped all-MiniLM-L6-v2)"}
_FLOOR = {"min": 0.0, "max": 1.0, "step": 0.05, "help": "HASSUM's floor: the least cosine similarity to a correct "
                                                        "reference that can count as correct"}


def from_decision(d: Decision, method: str) -> Correctness:
    """A rule's decision as a grading: ``refused`` → refused (not correct), ``uncertain`` → correct None and
    uncertain, ``correct`` → correct, anything else → wrong."""
    if d.label == "uncertain":
        return Correctness(None, method, d.evidence, d.matched, d.score, None, False, True)
    return Correctness(d.label == "correct", method, d.evidence, d.matched, d.score, None, d.label == "refused")


class _Embeds(Grader):
    """A grader that may embed: the embedder is made on first use and shared by :meth:`prepare`'s batch."""

    embedder: Any

    def _embedder(self):
        if self.embedder is None:
            from ..embeddings import Embedder

            self.embedder = Embedder()
        return self.embedder

    def prepare(self, texts: Sequence[str]) -> None:
        if self.needs_embedder():
            self._embedder().encode(list(texts))

    def _similarity(self, text: str, refs: Sequence[str]) -> list[float]:
        return [float(x) for x in np.asarray(self._embedder().similarity([text], list(refs)))[0]]


@dataclass
class StrictGrader(_Embeds):
    """A careful reader's rules (:func:`~uncertainty_lab.semantic.grading_rules.strict_rule`): the labs' default."""

    name: ClassVar[str] = "strict"
    summary: ClassVar[str] = ("a careful reader's rules: refusals, yes/no verdicts, incorrect references, negation "
                              "and hedging; paraphrases by word overlap (or embedding)")
    reads_incorrect: ClassVar[bool] = True

    overlap: float = field(default=0.5, metadata={"min": 0.0, "max": 1.0, "step": 0.05, "help": "content-word F1 "
                                                  "to a correct reference that makes a paraphrase correct"})
    paraphrase: Literal["tokens", "embedding"] = field(default="tokens", metadata={
        "help": "how an answer that holds no reference is read: word overlap or HASSUM's embedding rule"})
    floor: float = field(default=0.65, metadata=_FLOOR)
    embedder: Any = field(default=None, metadata=_EMBEDDER)

    @property
    def label(self) -> str:
        return "strict+embedding" if self.paraphrase == "embedding" else "strict"

    def needs_embedder(self) -> bool:
        return self.paraphrase == "embedding"

    def decide(self, answer, norm, correct, incorrect, question):
        sim = self._similarity if self.paraphrase == "embedding" else None
        d = strict_rule(answer, correct, incorrect, question, overlap=self.overlap, similarity=sim, floor=self.floor)
        return from_decision(d, self.label)


@dataclass
class HassumGrader(_Embeds):
    """HASSUM's rule (:func:`~uncertainty_lab.semantic.grading_rules.hassum_rule`) behind the refusal and yes/no
    steps."""

    name: ClassVar[str] = "hassum"
    summary: ClassVar[str] = ("HASSUM's rule: closer to a correct reference than to every incorrect one, and "
                              "cosine >= floor")
    reference: ClassVar[str] = "HASSUM (the orchestration lab's paper), its correctness rule"
    reads_incorrect: ClassVar[bool] = True

    floor: float = field(default=0.65, metadata=_FLOOR)
    embedder: Any = field(default=None, metadata=_EMBEDDER)

    def needs_embedder(self) -> bool:
        return True

    def decide(self, answer, norm, correct, incorrect, question):
        return from_decision(hassum_rule(answer, correct, incorrect, question, self._similarity, self.floor), self.name)


@dataclass
class NormalisedGrader(Grader):
    """The normalised answer equals a normalised reference (SQuAD-style exact match)."""

    name: ClassVar[str] = "normalised"
    summary: ClassVar[str] = "the normalised answer equals a normalised reference (exact match)"

    def decide(self, answer, norm, correct, incorrect, question):
        for alias in correct:
            if normalise_answer(alias) == norm:
                return Correctness(True, self.name, f"{norm!r} equals the alias {alias!r} after normalisation", alias)
        return Correctness(False, self.name, f"{norm!r} equals none of {correct} after normalisation")


@dataclass
class ContainsGrader(Grader):
    """A normalised reference appears as whole words in the normalised answer (the old default)."""

    name: ClassVar[str] = "contains"
    summary: ClassVar[str] = "a normalised reference appears as whole words in the answer (the old default)"

    def decide(self, answer, norm, correct, incorrect, question):
        for alias in correct:
            if f" {normalise_answer(alias)} " in f" {norm} ":
                return Correctness(True, self.name, f"the alias {alias!r} appears as whole words in {norm!r}", alias)
        return Correctness(False, self.name, f"no alias of {correct} appears as whole words in {norm!r}")


@dataclass
class EmbeddingGrader(_Embeds):
    """Cosine similarity of the answer and its nearest reference ≥ ``threshold``: topical closeness, not factual
    identity ("yes"/"no" 0.73, "1969"/"1970" 0.77, "Sydney"/"Canberra" 0.70), hence the default 0.8."""

    name: ClassVar[str] = "embedding"
    summary: ClassVar[str] = "cosine similarity to a correct reference >= threshold (no incorrect references)"

    threshold: float = field(default=0.8, metadata={"min": -1.0, "max": 1.0, "step": 0.01,
                                                    "help": "the least cosine similarity that counts as correct"})
    embedder: Any = field(default=None, metadata=_EMBEDDER)

    def needs_embedder(self) -> bool:
        return True

    def decide(self, answer, norm, correct, incorrect, question):
        sims = np.asarray(self._embedder().similarity([answer], correct))[0]
        best = int(np.argmax(sims))
        cos = float(sims[best])
        ok = cos >= self.threshold
        return Correctness(ok, self.name, f"cosine {cos:.3f} {'≥' if ok else '<'} {self.threshold} with the alias "
                           f"{correct[best]!r}", correct[best] if ok else None, cos)
