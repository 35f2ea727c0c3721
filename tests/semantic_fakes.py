"""Small in-test stand-ins for the semantic tests: NLI judges with hand-made outcomes, a similarity judge
with a hand-made matrix, an embedder with hand-made vectors, and a language model with canned replies."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from uncertainty_lab.semantic.judges import LABELS, EquivalenceJudge, Judgement, NLIJudge, Verdict

ONE_HOT = {"contradiction": (1.0, 0.0, 0.0), "neutral": (0.0, 1.0, 0.0), "entailment": (0.0, 0.0, 1.0)}


@dataclass
class TableNLIJudge(NLIJudge):
    """Directed NLI outcomes from a table {(premise, hypothesis): label or (p_c, p_n, p_e)}; pairs not in the
    table get ``default``. Counts the directed pairs it was asked about."""

    name: ClassVar[str] = "table_nli"
    table: Any = None
    default: Any = "contradiction"
    asked: list = field(default_factory=list, repr=False)

    def _verdicts_uncached(self, question, directed):
        out = []
        for p, h in directed:
            self.asked.append((p, h))
            v = (self.table or {}).get((p, h), self.default)
            probs = ONE_HOT[v] if isinstance(v, str) else tuple(float(x) for x in v)
            out.append(Verdict(LABELS[int(np.argmax(probs))], probs))
        return out


@dataclass
class TableSimilarityJudge(EquivalenceJudge):
    """Symmetric similarities from a table {frozenset({a, b}): s}; equivalent when s >= 0.5."""

    name: ClassVar[str] = "table_similarity"
    table: Any = None

    def _judge_uncached(self, question, pairs):
        out = []
        for a, b in pairs:
            s = float(self.table[frozenset((a, b))])
            out.append(Judgement(a, b, s >= 0.5, s))
        return out


class PairSetJudge:
    """A minimal student judge: only ``equivalent``, from a set of unordered equivalent pairs."""

    def __init__(self, pairs):
        self.pairs = {frozenset(p) for p in pairs}
        self.calls = 0

    def equivalent(self, question, a, b):
        self.calls += 1
        return a == b or frozenset((a, b)) in self.pairs


class FakeEmbedder:
    """Hand-made vectors per text (normalised on the way out), like Embedder.encode."""

    def __init__(self, vectors: dict[str, Any]):
        self.vectors = {k: np.asarray(v, dtype=float) for k, v in vectors.items()}

    def encode(self, texts):
        if isinstance(texts, str):
            texts = [texts]
        rows = [self.vectors[t] / np.linalg.norm(self.vectors[t]) for t in texts]
        return np.stack(rows).astype(np.float32)


def unit(deg: float) -> np.ndarray:
    r = np.deg2rad(deg)
    return np.array([np.cos(r), np.sin(r)])


@dataclass
class _FakeCompletion:
    text: str
    logprobs: Any = None
    cached: bool = False
    finish_reason: str = "stop"


class CannedLLM:
    """A backend stand-in: ``reply(prompt) -> text``; records every prompt."""

    supports_logprobs = False

    def __init__(self, reply):
        self.reply = reply
        self.prompts: list[str] = []

    def complete(self, messages, *, n=1, temperature=0.7, seed=0, max_tokens=128, logprobs=False, **kw):
        prompt = messages if isinstance(messages, str) else messages[-1]["content"]
        self.prompts.append(prompt)
        return [_FakeCompletion(self.reply(prompt)) for _ in range(n)]
