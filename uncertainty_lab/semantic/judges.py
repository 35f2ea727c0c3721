"""Equivalence judges (``equivalence_judges`` plugins): do two answers to a question mean the same?

Every judge has ``equivalent(question, a, b) -> bool`` (the registry's protocol; a student's judge needs
nothing else) and, through :class:`EquivalenceJudge`, the batched and cached ``judge_pairs(question, pairs)``
that clustering and the metrics use.

- ``exact``: :func:`normalise_answer` equality. Offline, instant; right for short answers only.
- ``embedding``: cosine similarity of sentence embeddings >= ``threshold``. Offline; paraphrase ≈ agreement,
  so it cannot see a contradiction that shares the topic ("Paris" vs "not Paris").
- ``llm_entailment``: asks any language-model backend whether answer A entails answer B, both directions.
- ``nli_cross_encoder``: a user-supplied NLI model (e.g. a DeBERTa-MNLI folder) via sentence-transformers'
  ``CrossEncoder``; all pairs are scored in one ``predict`` call.

The two entailment judges combine the two directed verdicts (A ⇒ B, B ⇒ A; each entailment / neutral /
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
import itertools
import math
import re
import threading
import uuid
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from .text import normalise_answer

__all__ = [
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
]

LABELS: tuple[str, str, str] = ("contradiction", "neutral", "entailment")
RELATIONS: tuple[str, ...] = (
    "strict_bidirectional",
    "no_contradiction",
    "no_contradiction_not_both_neutral",
    "either_direction",
)
_ONE_HOT = {label: tuple(float(i == k) for i in range(3)) for k, label in enumerate(LABELS)}


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
# the base class


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
        _check_texts(question, pairs)
        config = judge_config(self)
        out: list[Judgement | None] = [None] * len(pairs)
        todo: dict[tuple[str, str], list[int]] = {}
        for i, (a, b) in enumerate(pairs):
            if a == b:
                out[i] = self._self_judgement(a)
                continue
            hit = _cache_get(("pair", config, question, a, b))
            if hit is None:
                swapped = _cache_get(("pair", config, question, b, a))
                hit = swapped.swapped() if swapped is not None else None
            if hit is not None:
                self._hits += 1
                out[i] = hit
            else:
                todo.setdefault((a, b), []).append(i)
        if todo:
            keys = list(todo)
            self._misses += len(keys)
            for (a, b), j in zip(keys, self._judge_uncached(question, keys), strict=True):
                _cache_put(("pair", config, question, a, b), j)
                for i in todo[(a, b)]:
                    out[i] = j
        return out  # type: ignore[return-value]

    def _self_judgement(self, a: str) -> Judgement:
        return Judgement(a, a, True, 1.0)

    def _judge_uncached(self, question: str, pairs: list[tuple[str, str]]) -> list[Judgement]:
        raise NotImplementedError

    def probabilities(self, question: str, a: str, b: str) -> tuple[float, float, float]:
        """(p_contradiction, p_neutral, p_entailment) for a ⇒ b; only judges with ``gives_probabilities``."""
        raise JudgeCapabilityError(
            f"judge {self.name!r} gives no NLI probabilities; use llm_entailment or nli_cross_encoder"
        )

    def similarity_matrix(self, question: str, texts: Sequence[str], *, affinity: str = "entail") -> np.ndarray:
        """Symmetric (n, n) similarities in [0, 1] with a unit diagonal (see :func:`similarity_matrix`)."""
        from .clustering import similarity_matrix

        return similarity_matrix(self, texts, question, affinity=affinity)

    def cache_info(self) -> dict[str, float]:
        total = self._hits + self._misses
        return {"hits": self._hits, "misses": self._misses, "hit_rate": self._hits / total if total else math.nan}


def _check_texts(question: str, pairs) -> None:
    if not isinstance(question, str):
        raise TypeError(f"question must be a string, got {type(question).__name__}")
    for i, pair in enumerate(pairs):
        if len(pair) != 2 or not all(isinstance(t, str) for t in pair):
            raise TypeError(f"pairs[{i}] must be a pair of strings, got {pair!r}")


# ---------------------------------------------------------------------------------------------------
# exact and embedding


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


# ---------------------------------------------------------------------------------------------------
# entailment judges


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
        _check_texts(question, directed)
        config = judge_config(self, exclude=("relation",))
        out: list[Verdict | None] = [None] * len(directed)
        todo: dict[tuple[str, str], list[int]] = {}
        for i, (p, h) in enumerate(directed):
            if p == h:
                out[i] = Verdict("entailment", _ONE_HOT["entailment"], "(identical texts)")
                continue
            hit = _cache_get(("nli", config, question, p, h))
            if hit is not None:
                self._hits += 1
                out[i] = hit
            else:
                todo.setdefault((p, h), []).append(i)
        if todo:
            keys = list(todo)
            self._misses += len(keys)
            for key, v in zip(keys, self._verdicts_uncached(question, keys), strict=True):
                _cache_put(("nli", config, question, *key), v)
                for i in todo[key]:
                    out[i] = v
        return out  # type: ignore[return-value]

    def _verdicts_uncached(self, question: str, directed: list[tuple[str, str]]) -> list[Verdict]:
        raise NotImplementedError

    def judge_pairs(self, question, pairs):
        _check_texts(question, pairs)
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


_NEGATED_ENTAIL = re.compile(r"(?:\bnot|n't|\bno|\bnever|\bcannot)\s+(?:\w+\s+){0,2}?entail")
_KEYWORDS = [
    (re.compile(r"\bentail\w*"), "entailment"),
    (re.compile(r"\bcontradict\w*"), "contradiction"),
    (re.compile(r"\bneutral\w*"), "neutral"),
]
_FALLBACK = [
    (re.compile(r"\b(?:unrelated|unclear|undetermined|unknown|cannot be determined|maybe|partially|possibly)\b"), "neutral"),
    (re.compile(r"\b(?:inconsistent|incompatible|opposite|conflict\w*|false)\b"), "contradiction"),
    (re.compile(r"\b(?:yes|true|same|equivalent)\b"), "entailment"),
    (re.compile(r"\bno\b"), "neutral"),
]


def parse_nli_label(text: str) -> str | None:
    """Read an entailment / neutral / contradiction verdict from a model's free-text reply, leniently.

    The earliest of the words *entail…*, *contradict…*, *neutral* wins ("Entailment. No contradiction" is
    entailment); a negated entailment ("does not entail") does not count as one, and alone means neutral
    ("not entailment but a contradiction" is contradiction); failing those, yes/true → entailment,
    no/unclear → neutral (a "no" to "does A entail B?" is not a contradiction), inconsistent/false →
    contradiction. Returns None when nothing matches.
    """
    if not isinstance(text, str):
        return None
    t = " ".join(text.lower().replace("’", "'").split())
    if not t:
        return None
    negated = [m.span() for m in _NEGATED_ENTAIL.finditer(t)]
    found = []
    for rx, label in _KEYWORDS:
        for m in rx.finditer(t):
            if label == "entailment" and any(lo <= m.start() < hi for lo, hi in negated):
                continue  # "does not entail": not an entailment verdict
            found.append((m.start(), label))
    if found:
        return min(found)[1]
    if negated:
        return "neutral"
    hits = [(m.start(), label) for rx, label in _FALLBACK if (m := rx.search(t))]
    return min(hits)[1] if hits else None


ENTAILMENT_PROMPT = (
    "{context}Answer 1: {a}\nAnswer 2: {b}\n"
    "Does Answer 1 entail Answer 2, that is, if Answer 1 is true must Answer 2 also be true? "
    "Reply with exactly one word: entailment, neutral or contradiction."
)


@dataclass
class LLMEntailmentJudge(NLIJudge):
    """Asks a language model whether answer A entails answer B, in both directions.

    Verdicts are one-hot probabilities of the parsed label. A capable model (an Ollama model) is needed
    for useful verdicts: the embedded 135M model mostly rambles ("The answer to this question is") and
    such replies are reported as parse failures (counted as neutral), never hidden.
    """

    name: ClassVar[str] = "llm_entailment"
    summary: ClassVar[str] = "asks any LLM backend for entailment both ways; relation is a parameter"
    reference: ClassVar[str] = "Kuhn et al. 2023; Farquhar et al., Nature 2024 (LLM entailment variant)"
    batch_all_pairs: ClassVar[bool] = False

    llm: Any = field(default="embedded", metadata={"help": "a backend spec ('embedded', 'auto', 'ollama:<model>') or a backend instance"})
    max_tokens: int = field(default=8, metadata={"min": 1, "max": 256, "step": 1, "help": "tokens the verdict may use"})
    temperature: float = field(default=0.0, metadata={"min": 0.0, "max": 2.0, "step": 0.05, "help": "0 = the model's most likely verdict"})
    seed: int = field(default=0, metadata={"min": 0, "max": 2**31 - 1, "help": "sampling seed (matters only above temperature 0)"})
    prompt: str = field(default=ENTAILMENT_PROMPT, metadata={
        "help": "the question put to the model: a template with {a} (premise), {b} (hypothesis) and {context} "
                "(the question line, empty without a question)"})

    def __post_init__(self):
        for slot in ("{a}", "{b}"):
            if slot not in self.prompt:
                raise ValueError(f"prompt must contain {slot}; e.g. the default {ENTAILMENT_PROMPT!r}")
        self.llm = resolve_llm(self.llm)

    def render(self, question: str, premise: str, hypothesis: str) -> str:
        """The prompt that asks whether ``premise`` entails ``hypothesis``."""
        context = f"We are evaluating answers to the question: {question}\n" if question else ""
        values = {"{context}": context, "{a}": premise, "{b}": hypothesis}
        return re.sub(r"\{context\}|\{a\}|\{b\}", lambda m: values[m.group(0)], self.prompt)  # one pass: texts stay literal

    def _verdicts_uncached(self, question, directed):
        llm = self.llm
        out = []
        for p, h in directed:
            (c,) = llm.complete(self.render(question, p, h), n=1, temperature=self.temperature, seed=self.seed,
                                max_tokens=self.max_tokens)
            label = parse_nli_label(c.text)
            if label is None:
                out.append(Verdict("neutral", _ONE_HOT["neutral"], c.text, parsed=False))
            else:
                out.append(Verdict(label, _ONE_HOT[label], c.text))
        return out


_ce_models: dict[tuple[str, int], Any] = {}
_ce_lock = threading.Lock()


def _load_cross_encoder(path: str, max_length: int):
    key = (path, max_length)
    with _ce_lock:
        if key not in _ce_models:
            from ..embeddings import _offline

            _offline()
            import transformers
            from sentence_transformers import CrossEncoder

            transformers.utils.logging.disable_progress_bar()
            _ce_models[key] = CrossEncoder(path, device="cpu", local_files_only=True, max_length=max_length)
        return _ce_models[key]


@dataclass
class NLICrossEncoderJudge(NLIJudge):
    """A user-supplied NLI model (a local folder) scored with sentence-transformers' CrossEncoder."""

    name: ClassVar[str] = "nli_cross_encoder"
    summary: ClassVar[str] = "a local NLI model (e.g. DeBERTa-MNLI) via sentence-transformers CrossEncoder"
    reference: ClassVar[str] = "Kuhn et al. 2023 (DeBERTa-large-MNLI); Qiu & Miikkulainen 2024"

    model: str = field(default="", metadata={"help": "path of a local NLI cross-encoder / sequence-classification folder (required)"})
    label_order: str = field(default="contradiction,neutral,entailment", metadata={
        "help": "the model's output labels in index order, comma-separated (DeBERTa-MNLI: contradiction,neutral,entailment)"})
    prepend_question: bool = field(default=True, metadata={"help": "score 'question answer' pairs (Kuhn et al.)"})
    batch_size: int = field(default=32, metadata={"min": 1, "max": 1024, "step": 1, "help": "pairs per forward pass"})
    max_length: int = field(default=256, metadata={"min": 16, "max": 4096, "step": 16, "help": "tokens per pair"})

    def __post_init__(self):
        if not self.model:
            raise ValueError("nli_cross_encoder needs model=<path of a local NLI model folder>; no NLI model ships "
                             "with the package (use llm_entailment, or exact/embedding, without one)")
        labels = [s.strip().lower() for s in self.label_order.split(",")]
        if sorted(labels) != sorted(LABELS):
            raise ValueError(f"label_order must name contradiction, neutral and entailment once each, got {self.label_order!r}")
        self._columns = [labels.index(label) for label in LABELS]  # model column of each canonical label
        if not Path(self.model).expanduser().exists():
            raise FileNotFoundError(f"no NLI model at {self.model!r}; pass the folder of a local cross-encoder")

    def _cross_encoder(self):
        return _load_cross_encoder(str(Path(self.model).expanduser()), self.max_length)

    def _with_question(self, question: str, text: str) -> str:
        return f"{question} {text}" if self.prepend_question and question else text

    def _verdicts_uncached(self, question, directed):
        inputs = [(self._with_question(question, p), self._with_question(question, h)) for p, h in directed]
        probs = np.asarray(self._cross_encoder().predict(inputs, batch_size=self.batch_size, apply_softmax=True,
                                                         show_progress_bar=False), dtype=float).reshape(len(inputs), -1)
        if probs.shape[1] != 3:
            raise ValueError(f"the NLI model at {self.model!r} has {probs.shape[1]} outputs; an NLI model has 3")
        probs = probs[:, self._columns]
        return [Verdict(LABELS[int(np.argmax(row))], tuple(float(x) for x in row)) for row in probs]


# ---------------------------------------------------------------------------------------------------


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
    """A backend from a spec string (via get_llm, quietly) or a backend instance (returned as is)."""
    if isinstance(llm, str):
        from ..llm import get_llm

        return get_llm(llm, quiet=True)
    if not callable(getattr(llm, "complete", None)):
        raise TypeError(f"llm must be a backend spec string ('embedded', 'auto', 'ollama:<model>') or a backend instance, got {type(llm).__name__}")
    return llm


def pairs_upper(texts: Sequence[str]) -> list[tuple[str, str]]:
    """All unordered pairs (i < j) of the unique texts, in order."""
    return list(itertools.combinations(list(dict.fromkeys(texts)), 2))
