"""Equivalence judges (``equivalence_judges`` plugins): do two answers to a question mean the same?

- ``exact``: :func:`normalise_answer` equality. Offline, instant; right for short answers only.
- ``embedding``: cosine similarity of sentence embeddings >= ``threshold``. Offline; paraphrase ≈ agreement,
  so it cannot see a contradiction that shares the topic ("Paris" vs "not Paris").
- ``llm_entailment``: asks any language-model backend whether answer A entails answer B, both directions.
- ``nli_cross_encoder``: a user-supplied NLI model (e.g. a DeBERTa-MNLI folder) via sentence-transformers'
  ``CrossEncoder``; all pairs are scored in one ``predict`` call.

The first two are defined here; the entailment judges in ``judges_nli``, their common ground (verdicts,
relations, the cache, the base classes) in ``judges_base``. Every judge name is importable from this module.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .judges_base import (
    LABELS,
    RELATIONS,
    EquivalenceJudge,
    JudgeCapabilityError,
    Judgement,
    NLIJudge,
    Verdict,
    clear_judgement_cache,
    judge_config,
    relation_holds,
    resolve_judge,
    resolve_llm,
)
from .judges_nli import ENTAILMENT_PROMPT, LLMEntailmentJudge, NLICrossEncoderJudge, parse_nli_label
from .text import normalise_answer

__all__ = [
    "ENTAILMENT_PROMPT",
    "LABELS",
    "RELATIONS",
    "EmbeddingJudge",
    "EquivalenceJudge",
    "ExactJudge",
    "JudgeCapabilityError",
    "Judgement",
    "LLMEntailmentJudge",
    "NLICrossEncoderJudge",
    "NLIJudge",
    "Verdict",
    "clear_judgement_cache",
    "judge_config",
    "parse_nli_label",
    "relation_holds",
    "resolve_judge",
    "resolve_llm",
]


@dataclass
class ExactJudge(EquivalenceJudge):
    """Equal after normalise_answer (case, accents, punctuation, articles)."""

    name: ClassVar[str] = "exact"
    summary: ClassVar[str] = "equal after normalisation (case, accents, punctuation, a/an/the); short answers"
    reference: ClassVar[str] = "SQuAD-style answer normalisation"

    def _judge_uncached(self, question, pairs):
        norm = {t: normalise_answer(t) for pair in pairs for t in pair}  # each distinct text once
        return [Judgement(a, b, norm[a] == norm[b], float(norm[a] == norm[b])) for a, b in pairs]


@dataclass
class EmbeddingJudge(EquivalenceJudge):
    """Cosine similarity of sentence embeddings >= threshold."""

    name: ClassVar[str] = "embedding"
    summary: ClassVar[str] = "cosine similarity of all-MiniLM-L6-v2 embeddings >= threshold (offline)"
    reference: ClassVar[str] = "Reimers & Gurevych 2019 (Sentence-BERT)"

    threshold: float = field(default=0.85, metadata={"min": -1.0, "max": 1.0, "step": 0.01,
                                                      "help": "cosine similarity at or above which two answers are equivalent"})
    model: str = field(default="", metadata={"help": "a local sentence-transformers folder; empty = all-MiniLM-L6-v2"})
    normalise: bool = field(default=False, metadata={"help": "embed normalise_answer(text) instead of the raw text"})
    prepend_question: bool = field(default=False, metadata={"help": "embed 'question answer' instead of the answer"})
    embedder: Any = field(default=None, repr=False, metadata={"hidden": True,
                                                               "help": "an object with encode(texts) -> unit rows"})

    def __post_init__(self):
        if self.embedder is None:  # cheap: the model itself loads on the first encode
            from ..embeddings import Embedder

            self.embedder = Embedder(self.model or None)
        if not callable(getattr(self.embedder, "encode", None)):
            raise TypeError(f"embedder must have encode(texts), got {type(self.embedder).__name__}")

    def _prepare(self, question: str, text: str) -> str:
        text = normalise_answer(text) if self.normalise else text
        return f"{question} {text}" if self.prepend_question and question else text

    def truncated(self, question: str, texts: Sequence[str]) -> int | None:
        """How many of ``texts`` the embedder reads only in part, as this judge prepares them (None: cannot say)."""
        count = getattr(self.embedder, "truncated", None)
        return len(count([self._prepare(question, t) for t in texts])) if callable(count) else None

    def encode(self, question: str, texts: Sequence[str]) -> np.ndarray:
        """Unit-norm embeddings of ``texts`` as this judge sees them."""
        vecs = np.asarray(self.embedder.encode([self._prepare(question, t) for t in texts]), dtype=float)
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        return vecs / np.where(norms > 0, norms, 1.0)

    def _judge_uncached(self, question, pairs):
        texts = list(dict.fromkeys(t for pair in pairs for t in pair))
        index = {t: i for i, t in enumerate(texts)}
        vecs = self.encode(question, texts)
        out = []
        for a, b in pairs:
            cos = float(np.clip(vecs[index[a]] @ vecs[index[b]], -1.0, 1.0))
            out.append(Judgement(a, b, cos >= self.threshold, max(0.0, cos)))
        return out
