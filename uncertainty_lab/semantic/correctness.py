"""Is an answer correct? Six named graders of an answer against its references, each returning a
:class:`Correctness` that says how it decided.

- ``strict`` (the labs' default): a careful reader's rules (:mod:`.grading_rules`): refusals get their own label,
  yes/no items are read by their verdict (an echoed "yes or no" ignored), the incorrect references count against
  the answer, negation and hedging are seen, a one-word reference counts only as the verdict, numbers and units
  are read one way, and paraphrases by word overlap (or, with ``paraphrase="embedding"``, by HASSUM's rule).
- ``hassum``: HASSUM's rule — embedding similarity to the correct references above that to the incorrect ones
  and ≥ ``floor`` (0.65) — behind the same refusal and yes/no steps.
- ``normalised``: the normalised answer equals a normalised alias (SQuAD-style exact match).
- ``contains``: a normalised alias appears as whole words in the normalised answer — the old default. It
  cannot see negation, a second, wrong answer in the same sentence ("No, not yes"), an echoed "yes or no", or
  a refusal that is itself an alias ("I have no comment"); ``strict`` replaces it.
- ``embedding``: cosine similarity of the answer and an alias ≥ ``threshold`` (all-MiniLM-L6-v2).
  It measures topical closeness, not factual identity: "yes"/"no" score 0.73, "1969"/"1970" 0.77,
  "Sydney"/"Canberra" 0.70 — hence the default 0.8, and a warning to look at the scores.
- ``llm``: asks a backend "is the answer correct given these gold answers? yes/no" at temperature 0.
  The reply is parsed leniently; a reply that is neither gives ``correct=None`` (unjudged), never a
  guess — count those and report them.

How far to trust ``strict``: against hand labels of 282 REAL sampled answers of the embedded model to TruthfulQA and
StrategyQA questions never used to tune its rules (``benchmarks/grading_audit_real.py``; the answers are regenerated
from the public files, the repository holds hashes and labels), Cohen's κ = 0.74 [95% bootstrap 0.63, 0.85]
(StrategyQA 0.76, TruthfulQA 0.52 [0.17, 0.83]: few right answers), 93% agreement, 3.4% of hand-wrong answers graded
correct, 1.4% ``uncertain``; the rules before issue #21 scored κ = 0.59 and graded 14% of them correct. On the
answers we wrote (``datasets/data/grader_audit.jsonl``, a regression set) it agrees 95% (κ 0.91) — a written set
overstates agreement with real output. Where its rules cannot decide, ``strict`` says so: ``label == "uncertain"``,
``correct`` None (count those; never read them as right).

Only ``strict`` and ``hassum`` read the incorrect references and label refusals (``label == "refused"``,
``correct`` False). An answer that normalises to nothing is wrong, with evidence saying so (check answer
extraction).
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .grading_rules import Decision, hassum_rule, strict_rule
from .text import normalise_answer

__all__ = ["CAREFUL", "LABELS", "METHODS", "AnswerGrader", "Correctness", "check_answer", "correctness_labels", "is_correct",
           "parse_yes_no"]

METHODS = ("strict", "hassum", "normalised", "contains", "embedding", "llm")
#: the methods that read the incorrect references and label refusals
CAREFUL = ("strict", "hassum")
LABELS = ("correct", "wrong", "refused")
YES = frozenset({"yes", "correct", "true", "right"})
NO = frozenset({"no", "incorrect", "false", "wrong"})
NEGATION = frozenset({"not", "t", "never", "neither", "nor"})  # "isn't" normalises to "isn t"

JUDGE_SYSTEM = "You grade answers to quiz questions. Reply with one word: yes or no."


@dataclass(frozen=True)
class Correctness:
    """A grading: ``correct`` (None = the judge's reply could not be parsed), the ``method``, a
    human-readable ``evidence``, the gold alias that ``matched``, a ``score`` (cosine or F1), the judge's
    ``raw`` reply, and whether the answer ``refused`` (then ``correct`` is False and :attr:`label` says so)."""

    correct: bool | None
    method: str
    evidence: str
    matched: str | None = None
    score: float | None = None
    raw: str | None = None
    refused: bool = False
    uncertain: bool = False

    @property
    def judged(self) -> bool:
        return self.correct is not None

    @property
    def label(self) -> str:
        """``correct``, ``wrong``, ``refused``, ``uncertain`` (the rules could not decide) or ``unjudged``."""
        if self.refused:
            return "refused"
        if self.uncertain:
            return "uncertain"
        return "unjudged" if self.correct is None else ("correct" if self.correct else "wrong")


def parse_yes_no(reply: str) -> bool | None:
    """yes → True, no → False. A leading yes/no word decides; otherwise every yes-word {yes, correct, true,
    right} and no-word {no, incorrect, false, wrong} counts, flipped when one of the two words before it is
    a negation ("not correct" → no), and they must all agree; anything else is None (unparsed)."""
    words = normalise_answer(reply).split()
    if not words:
        return None
    if words[0] in YES:
        return True
    if words[0] in NO:
        return False
    found = set()
    for i, w in enumerate(words):
        if w in YES or w in NO:
            negated = w != "no" and bool(NEGATION.intersection(words[max(0, i - 2):i]))
            found.add((w in YES) != negated)
    return found.pop() if len(found) == 1 else None


def _aliases(gold_aliases) -> list[str]:
    if isinstance(gold_aliases, str):
        gold_aliases = [gold_aliases]
    aliases = list(gold_aliases)
    if not aliases:
        raise ValueError("gold_aliases is empty; give at least one correct answer")
    for i, a in enumerate(aliases):
        if not isinstance(a, str):
            raise ValueError(f"gold_aliases[{i}] must be a string, got {type(a).__name__}")
        if not normalise_answer(a):
            raise ValueError(f"gold_aliases[{i}] = {a!r} is empty after normalisation; fix the gold data")
    return aliases


@dataclass
class AnswerGrader:
    """A configured grader: ``method`` (one of :data:`METHODS`), ``threshold`` (``embedding`` cosine), an
    ``embedder`` (default: the shipped MiniLM), an ``llm`` (backend or spec for ``get_llm``; needed for
    ``llm``), the judge's ``seed`` and ``max_tokens``; for ``strict`` and ``hassum``: ``floor`` (HASSUM's 0.65),
    ``overlap`` (``strict``'s content-word F1 for a paraphrase) and ``paraphrase`` (``"tokens"`` or
    ``"embedding"``: how ``strict`` reads an answer that holds no reference)."""

    method: str = "normalised"
    threshold: float = 0.8
    embedder: Any = None
    llm: Any = None
    seed: int = 0
    max_tokens: int = 8
    floor: float = 0.65
    overlap: float = 0.5
    paraphrase: str = "tokens"
    _backend: Any = field(default=None, init=False, repr=False)

    def __post_init__(self):
        if self.method not in METHODS:
            close = difflib.get_close_matches(str(self.method), METHODS, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ValueError(f"method must be one of {METHODS}, got {self.method!r}{hint}")
        if not -1.0 <= float(self.threshold) <= 1.0:
            raise ValueError(f"threshold is a cosine similarity in [-1, 1], got {self.threshold!r}")
        if self.method == "llm" and self.llm is None:
            raise ValueError("method='llm' needs llm=<a backend or a spec such as 'embedded'>")
        for name in ("floor", "overlap"):
            if not 0.0 <= float(getattr(self, name)) <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {getattr(self, name)!r}")
        if self.paraphrase not in ("tokens", "embedding"):
            raise ValueError(f"paraphrase must be 'tokens' or 'embedding', got {self.paraphrase!r}")

    @property
    def name(self) -> str:
        """The method, with ``+embedding`` when ``strict`` reads paraphrases by embedding."""
        return "strict+embedding" if self.method == "strict" and self.paraphrase == "embedding" else self.method

    def needs_embedder(self) -> bool:
        return self.method in ("embedding", "hassum") or self.name == "strict+embedding"

    def _embedder(self):
        if self.embedder is None:
            from ..embeddings import Embedder

            self.embedder = Embedder()
        return self.embedder

    def _llm_backend(self):
        if self._backend is None:
            from ..llm import as_backend

            self._backend = as_backend(self.llm)
        return self._backend

    def check(self, answer: str, gold_aliases: Sequence[str] | str, question: str | None = None,
              incorrect: Sequence[str] = ()) -> Correctness:
        """Grade one answer against its gold aliases (``question`` is shown to the LLM judge and read by the
        yes/no verdict; ``incorrect`` references are read by ``strict`` and ``hassum``)."""
        if not isinstance(answer, str):
            raise ValueError(f"answer must be a string, got {type(answer).__name__}")
        aliases = _aliases(gold_aliases)
        wrong = [w for w in ([incorrect] if isinstance(incorrect, str) else list(incorrect or ()))
                 if isinstance(w, str) and normalise_answer(w)]
        norm = normalise_answer(answer)
        if not norm:
            return Correctness(False, self.name, f"empty answer {answer!r} after normalisation; check answer extraction")
        if self.method in CAREFUL:
            return self._careful(answer, aliases, wrong, question)
        return getattr(self, f"_{self.method}")(answer, norm, aliases, question)

    def check_many(self, answers: Sequence[str], golds: Sequence[Sequence[str] | str],
                   questions: Sequence[str] | None = None,
                   incorrect: Sequence[Sequence[str]] | None = None) -> list[Correctness]:
        """Grade answers[i] against golds[i] (and incorrect[i]); embeddings are computed in one batch."""
        n = len(answers)
        if len(golds) != n or (questions is not None and len(questions) != n) or (incorrect is not None
                                                                                  and len(incorrect) != n):
            raise ValueError(f"answers ({n}), golds ({len(golds)})"
                             + (f", questions ({len(questions)})" if questions is not None else "")
                             + (f", incorrect ({len(incorrect)})" if incorrect is not None else "")
                             + " must have the same length")
        wrongs = incorrect if incorrect is not None else [()] * n
        if self.needs_embedder():
            texts = [a for a in answers if isinstance(a, str)]
            texts += [g for gs in (*golds, *wrongs) for g in ([gs] if isinstance(gs, str) else gs) if isinstance(g, str)]
            self._embedder().encode(list(dict.fromkeys(texts)))
        qs = questions if questions is not None else [None] * n
        return [self.check(a, g, q, w) for a, g, q, w in zip(answers, golds, qs, wrongs, strict=True)]

    def _similarity(self, text: str, refs: Sequence[str]) -> list[float]:
        return [float(x) for x in np.asarray(self._embedder().similarity([text], list(refs)))[0]]

    def _careful(self, answer: str, aliases: list[str], incorrect: list[str], question: str | None) -> Correctness:
        if self.method == "hassum":
            d: Decision = hassum_rule(answer, aliases, incorrect, question, self._similarity, self.floor)
        else:
            sim = self._similarity if self.paraphrase == "embedding" else None
            d = strict_rule(answer, aliases, incorrect, question, overlap=self.overlap, similarity=sim,
                            floor=self.floor)
        return Correctness(None if d.label == "uncertain" else d.label == "correct", self.name, d.evidence, d.matched,
                           d.score, None, d.label == "refused", d.label == "uncertain")

    def _normalised(self, answer, norm, aliases, question):
        for alias in aliases:
            if normalise_answer(alias) == norm:
                return Correctness(True, "normalised", f"{norm!r} equals the alias {alias!r} after normalisation", alias)
        return Correctness(False, "normalised", f"{norm!r} equals none of {aliases} after normalisation")

    def _contains(self, answer, norm, aliases, question):
        for alias in aliases:
            if f" {normalise_answer(alias)} " in f" {norm} ":
                return Correctness(True, "contains", f"the alias {alias!r} appears as whole words in {norm!r}", alias)
        return Correctness(False, "contains", f"no alias of {aliases} appears as whole words in {norm!r}")

    def _embedding(self, answer, norm, aliases, question):
        sims = np.asarray(self._embedder().similarity([answer], aliases))[0]
        best = int(np.argmax(sims))
        cos = float(sims[best])
        ok = cos >= self.threshold
        rel = "≥" if ok else "<"
        return Correctness(ok, "embedding", f"cosine {cos:.3f} {rel} {self.threshold} with the alias {aliases[best]!r}",
                           aliases[best] if ok else None, cos)

    def judge_messages(self, answer: str, aliases: Sequence[str], question: str | None = None) -> list[dict[str, str]]:
        """The chat messages the LLM judge is sent."""
        q = f"Question: {question}\n" if question else ""
        gold = "; ".join(aliases)
        user = (f"{q}Gold answers (any of these is correct): {gold}\nProposed answer: {answer}\n"
                "Is the proposed answer correct given the gold answers? Reply yes or no.")
        return [{"role": "system", "content": JUDGE_SYSTEM}, {"role": "user", "content": user}]

    def _llm(self, answer, norm, aliases, question):
        backend = self._llm_backend()
        reply = backend.complete(self.judge_messages(answer, aliases, question), n=1, temperature=0.0, seed=self.seed,
                                 max_tokens=self.max_tokens)[0].text
        verdict = parse_yes_no(reply)
        who = getattr(backend, "label", type(backend).__name__)
        if verdict is None:
            return Correctness(None, "llm", f"unparsed reply from {who}: {reply!r} (neither yes nor no)", raw=reply)
        return Correctness(verdict, "llm", f"{who} replied {reply.strip()!r}", None, raw=reply)


def check_answer(answer: str, gold_aliases: Sequence[str] | str, method: str = "normalised", *,
                 question: str | None = None, incorrect: Sequence[str] = (), **options) -> Correctness:
    """Grade ``answer`` with the named ``method``; ``options`` configure :class:`AnswerGrader`."""
    return AnswerGrader(method, **options).check(answer, gold_aliases, question, incorrect)


def is_correct(answer: str, gold_aliases: Sequence[str] | str, method: str = "normalised", *,
               question: str | None = None, incorrect: Sequence[str] = (), **options) -> bool | None:
    """True/False (a refusal is False: read :attr:`Correctness.label`), or None when the LLM judge's reply
    could not be parsed (count those)."""
    return check_answer(answer, gold_aliases, method, question=question, incorrect=incorrect, **options).correct


def correctness_labels(results: Sequence[Correctness], *, unjudged: str = "raise") -> tuple[np.ndarray, np.ndarray]:
    """(labels, kept): boolean labels of the judged results and their indices. ``unjudged="raise"`` refuses
    unparsed judgements; ``"drop"`` leaves them out (report ``len(results) - len(kept)``)."""
    if unjudged not in ("raise", "drop"):
        raise ValueError(f"unjudged must be 'raise' or 'drop', got {unjudged!r}")
    missing = [i for i, r in enumerate(results) if r.correct is None]
    if missing and unjudged == "raise":
        raise ValueError(f"{len(missing)} of {len(results)} answers are unjudged (e.g. index {missing[0]}: "
                         f"{results[missing[0]].evidence}); pass unjudged='drop' and report the count")
    kept = np.array([i for i, r in enumerate(results) if r.correct is not None], dtype=int)
    return np.array([results[i].correct for i in kept], dtype=bool), kept
