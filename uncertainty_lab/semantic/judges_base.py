"""What every equivalence judge shares: NLI labels and relations, verdicts and judgements, one cache, the bases.

A judge answers ``equivalent(question, a, b) -> bool`` (the registry's protocol; a student's judge needs
nothing else); :class:`EquivalenceJudge` adds the batched, cached ``judge_pairs(question, pairs)`` that
clustering and the metrics use, and :class:`NLIJudge` the directed entailment verdicts. The built-in judges
live in ``judges`` (exact, embedding) and ``judges_nli`` (llm_entailment, nli_cross_encoder).

An entailment judge combines the two directed verdicts (A ⇒ B, B ⇒ A; each entailment / neutral /
contradiction) with a named ``relation``:

==================================== ===================================================================
``strict_bidirectional`` (default)   both directions entailment (Kuhn et al. 2023; Farquhar et al. 2024)
``no_contradiction``                 neither direction contradiction
``no_contradiction_not_both_neutral`` neither contradiction, and not both neutral (the non-strict rule of
                                     Farquhar et al.'s code: at least one entailment, no contradiction)
``either_direction``                 at least one direction entailment (contradiction the other way allowed)
==================================== ===================================================================

Probabilistic judges (``gives_probabilities``) expose ``probabilities(question, a, b) -> (p_c, p_n, p_e)``
for A ⇒ B; semantic density turns them into NLI distances and the graph metrics into similarities.
A text always entails itself: identical strings are never sent to a model.

Caching: directed verdicts (NLI judges) and pair judgements (the others) live in one in-process cache keyed
by the judge's configuration, the question and the texts, shared by every judge instance with the same
configuration. ``judge.cache_info()`` reports this judge's hits and misses; :func:`clear_judgement_cache`
empties the cache.
"""

from __future__ import annotations

import dataclasses
import math
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

__all__ = [
    "LABELS",
    "ONE_HOT",
    "RELATIONS",
    "EquivalenceJudge",
    "JudgeCapabilityError",
    "Judgement",
    "NLIJudge",
    "Verdict",
    "check_texts",
    "clear_judgement_cache",
    "judge_config",
    "relation_holds",
    "resolve_judge",
    "resolve_llm",
]

LABELS: tuple[str, str, str] = ("contradiction", "neutral", "entailment")
RELATIONS: tuple[str, ...] = (
    "strict_bidirectional",
    "no_contradiction",
    "no_contradiction_not_both_neutral",
    "either_direction",
)
ONE_HOT = {label: tuple(float(i == k) for i in range(3)) for k, label in enumerate(LABELS)}


class JudgeCapabilityError(TypeError):
    """The judge cannot do what was asked (e.g. give NLI probabilities)."""


def relation_holds(relation: str, forward: str, backward: str) -> bool:
    """Whether two directed NLI labels (A ⇒ B, B ⇒ A) make A and B equivalent under ``relation``."""
    for label in (forward, backward):
        if label not in LABELS:
            raise ValueError(f"an NLI label must be one of {LABELS}, got {label!r}")
    pair = (forward, backward)
    if relation == "strict_bidirectional":
        return pair == ("entailment", "entailment")
    if relation == "no_contradiction":
        return "contradiction" not in pair
    if relation == "no_contradiction_not_both_neutral":
        return "contradiction" not in pair and pair != ("neutral", "neutral")
    if relation == "either_direction":
        return "entailment" in pair
    raise ValueError(f"relation must be one of {list(RELATIONS)}, got {relation!r}")


@dataclass(frozen=True)
class Verdict:
    """One directed NLI verdict, premise ⇒ hypothesis: its label and (p_contradiction, p_neutral,
    p_entailment). An LLM judge's verdict is one-hot; ``raw`` keeps its reply and ``parsed`` says whether
    the reply could be read (an unreadable reply counts as neutral and is reported, never hidden)."""

    label: str
    probabilities: tuple[float, float, float]
    raw: str = ""
    parsed: bool = True


@dataclass(frozen=True)
class Judgement:
    """The judgement of one pair (a, b): equivalent or not, a similarity in [0, 1] for graph metrics,
    and for entailment judges the two directed verdicts."""

    a: str
    b: str
    equivalent: bool
    similarity: float
    forward: Verdict | None = None  # a ⇒ b
    backward: Verdict | None = None  # b ⇒ a

    def swapped(self) -> Judgement:
        return Judgement(self.b, self.a, self.equivalent, self.similarity, self.backward, self.forward)

    @property
    def parse_failures(self) -> list[str]:
        return [v.raw for v in (self.forward, self.backward) if v is not None and not v.parsed]


# ---------------------------------------------------------------------------------------------------
# the shared cache


_CACHE_MAX = 200_000
_cache: OrderedDict[tuple, Any] = OrderedDict()
_cache_lock = threading.Lock()


def clear_judgement_cache() -> None:
    """Forget every cached pair judgement and NLI verdict."""
    with _cache_lock:
        _cache.clear()


def _cache_get(key: tuple) -> Any:
    with _cache_lock:
        value = _cache.get(key)
        if value is not None:
            _cache.move_to_end(key)
        return value


def _cache_put(key: tuple, value: Any) -> None:
    with _cache_lock:
        _cache[key] = value
        if len(_cache) > _CACHE_MAX:
            _cache.popitem(last=False)


def _component_key(value: Any, token: str) -> Any:
    """A cache-key part for a parameter: plain values as they are, a backend by its label (same model,
    same answers), an embedder by its model path, anything else by this judge's private token."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    try:
        label = getattr(value, "label", None)
    except Exception:  # e.g. a replay backend that cannot name its model yet: keep answers private to this judge
        label = None
    if isinstance(label, str):
        return ("backend", label)
    path = getattr(value, "path", None)
    if isinstance(path, (str, Path)):
        return ("path", str(path))
    return ("object", token)


def judge_config(judge: Any, *, exclude: Sequence[str] = ()) -> tuple:
    """The configuration a judge's cached answers depend on: its name and parameter values."""
    token = getattr(judge, "_token", None) or str(id(judge))
    name = getattr(judge, "name", type(judge).__name__)
    if not dataclasses.is_dataclass(judge):
        return (name, ("object", token))
    parts = tuple(
        (f.name, _component_key(getattr(judge, f.name), token))
        for f in dataclasses.fields(judge)
        if not f.name.startswith("_") and f.name not in exclude
    )
    return (name, *parts)


# ---------------------------------------------------------------------------------------------------
# the base classes


@dataclass
class EquivalenceJudge:
    """Base class of the built-in judges. Subclasses implement :meth:`_judge_uncached`."""

    name: ClassVar[str] = "base"
    summary: ClassVar[str] = ""
    reference: ClassVar[str] = ""
    gives_probabilities: ClassVar[bool] = False
    #: clustering judges every unique pair up front (one batch) instead of only representatives, because
    #: a batch costs about what one pair costs (cross-encoder, embeddings); LLM judges ask lazily
    batch_all_pairs: ClassVar[bool] = True

    _hits: int = field(default=0, init=False, repr=False, compare=False)
    _misses: int = field(default=0, init=False, repr=False, compare=False)
    _token: str = field(default_factory=lambda: uuid.uuid4().hex, init=False, repr=False, compare=False)

    # -- the protocol --------------------------------------------------------------------------------
    def equivalent(self, question: str, a: str, b: str) -> bool:
        """Whether ``a`` and ``b`` mean the same as answers to ``question``."""
        return self.judge(question, a, b).equivalent

    def judge(self, question: str, a: str, b: str) -> Judgement:
        return self.judge_pairs(question, [(a, b)])[0]

    def similarity(self, question: str, a: str, b: str) -> float:
        """A similarity in [0, 1] (1 for equivalent answers of a 0/1 judge)."""
        return self.judge(question, a, b).similarity

    def judge_pairs(self, question: str, pairs: Sequence[tuple[str, str]]) -> list[Judgement]:
        """Judge many pairs: cached ones from the cache, the rest in one batch."""
        check_texts(question, pairs)
        prefix = ("pair", judge_config(self), question)
        return self._cached(prefix, pairs, self._self_judgement, lambda todo: self._judge_uncached(question, todo),
                            symmetric=True)

    def _cached(self, prefix: tuple, pairs: Sequence[tuple[str, str]], identical: Callable[[str], Any],
                compute: Callable[[list[tuple[str, str]]], list[Any]], *, symmetric: bool = False) -> list[Any]:
        """One answer per pair (a, b): ``identical(a)`` when a == b; else the cached one under ``(*prefix, a, b)``
        (``symmetric``: or the cached (b, a) answer, swapped); the rest from one ``compute`` call, then cached.
        Counts this judge's cache hits and misses."""
        out: list[Any] = [None] * len(pairs)
        todo: dict[tuple[str, str], list[int]] = {}
        for i, (a, b) in enumerate(pairs):
            if a == b:
                out[i] = identical(a)
                continue
            hit = _cache_get((*prefix, a, b))
            if hit is None and symmetric:
                swapped = _cache_get((*prefix, b, a))
                hit = swapped.swapped() if swapped is not None else None
            if hit is not None:
                self._hits += 1
                out[i] = hit
            else:
                todo.setdefault((a, b), []).append(i)
        if todo:
            keys = list(todo)
            self._misses += len(keys)
            for key, value in zip(keys, compute(keys), strict=True):
                _cache_put((*prefix, *key), value)
                for i in todo[key]:
                    out[i] = value
        return out

    def _self_judgement(self, a: str) -> Judgement:
        return Judgement(a, a, True, 1.0)

    def _judge_uncached(self, question: str, pairs: list[tuple[str, str]]) -> list[Judgement]:
        raise NotImplementedError

    def probabilities(self, question: str, a: str, b: str) -> tuple[float, float, float]:
        """(p_contradiction, p_neutral, p_entailment) for a ⇒ b; only judges with ``gives_probabilities``."""
        raise JudgeCapabilityError(
            f"judge {self.name!r} gives no NLI probabilities; use llm_entailment or nli_cross_encoder"
        )

    def cache_info(self) -> dict[str, float]:
        total = self._hits + self._misses
        return {"hits": self._hits, "misses": self._misses, "hit_rate": self._hits / total if total else math.nan}


def check_texts(question: str, pairs) -> None:
    if not isinstance(question, str):
        raise TypeError(f"question must be a string, got {type(question).__name__}")
    for i, pair in enumerate(pairs):
        if len(pair) != 2 or not all(isinstance(t, str) for t in pair):
            raise TypeError(f"pairs[{i}] must be a pair of strings, got {pair!r}")


@dataclass
class NLIJudge(EquivalenceJudge):
    """Base of the entailment judges: directed verdicts, cached apart from the relation (changing the
    relation reuses them), combined per pair with :func:`relation_holds`. Subclasses implement
    :meth:`_verdicts_uncached`."""

    gives_probabilities: ClassVar[bool] = True

    relation: str = field(default="strict_bidirectional", metadata={
        "choices": RELATIONS, "help": "how the two directed verdicts make an equivalence (see the module doc)"})

    def verdicts(self, question: str, directed: Sequence[tuple[str, str]]) -> list[Verdict]:
        """Verdicts for (premise, hypothesis) pairs: cached ones from the cache, the rest in one batch."""
        check_texts(question, directed)
        prefix = ("nli", judge_config(self, exclude=("relation",)), question)
        return self._cached(prefix, directed, lambda _: Verdict("entailment", ONE_HOT["entailment"], "(identical texts)"),
                            lambda todo: self._verdicts_uncached(question, todo))

    def _verdicts_uncached(self, question: str, directed: list[tuple[str, str]]) -> list[Verdict]:
        raise NotImplementedError

    def judge_pairs(self, question, pairs):
        check_texts(question, pairs)
        directed = [d for a, b in pairs for d in ((a, b), (b, a))]
        verdicts = self.verdicts(question, directed)
        out = []
        for k, (a, b) in enumerate(pairs):
            fwd, bwd = verdicts[2 * k], verdicts[2 * k + 1]
            sim = 0.5 * (fwd.probabilities[2] + bwd.probabilities[2])
            out.append(Judgement(a, b, relation_holds(self.relation, fwd.label, bwd.label), sim, fwd, bwd))
        return out

    def probabilities(self, question, a, b):
        return self.verdicts(question, [(a, b)])[0].probabilities

    def probabilities_many(self, question: str, directed: Sequence[tuple[str, str]]) -> np.ndarray:
        """(m, 3) array of (p_c, p_n, p_e) for (premise, hypothesis) pairs, batched and cached."""
        return np.array([v.probabilities for v in self.verdicts(question, directed)], dtype=float).reshape(-1, 3)


# ---------------------------------------------------------------------------------------------------
# resolving what a user wrote


def resolve_judge(judge: Any) -> Any:
    """A judge from a registered name (created with its defaults) or a judge instance (returned as is)."""
    if isinstance(judge, str):
        from .. import registry

        return registry.create("equivalence_judges", judge)
    if isinstance(judge, type):
        raise TypeError(f"judge must be a name or an instance, got the class {judge.__name__}; instantiate it")
    if not callable(getattr(judge, "equivalent", None)):
        raise TypeError(f"judge must be an equivalence_judges name or an object with equivalent(question, a, b), got {judge!r}")
    return judge


def resolve_llm(llm: Any) -> Any:
    """A backend from a spec string or a backend instance: :func:`uncertainty_lab.llm.as_backend`."""
    from ..llm import as_backend

    return as_backend(llm)
