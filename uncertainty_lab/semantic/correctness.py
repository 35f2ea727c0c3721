"""Is an answer correct? The ``graders`` plugin kind, used by name: ``strict`` (the labs' default), ``hassum``,
``normalised``, ``contains``, ``embedding`` (:mod:`.graders`) and ``llm`` (:mod:`.llm_judge`), or a researcher's
own (an entry point in ``uncertainty_lab.graders`` or ``@registry.register("graders", "mine")``). Each returns a
:class:`Correctness` that says how it decided, with a label ``correct``, ``wrong``, ``refused`` or ``uncertain``.

This module keeps the names that predate the plugin kind: :class:`AnswerGrader` (a grader chosen by ``method``
with one flat set of options, resolved through the registry), :func:`check_answer`, :func:`is_correct`,
:func:`correctness_labels`, :func:`parse_yes_no`, :data:`METHODS`. Only the careful graders (``strict``,
``hassum``) and the LLM judge read the incorrect references; only the careful ones label refusals.

How far to trust ``strict``: against hand labels of 820 REAL sampled answers of the embedded model to TruthfulQA
and StrategyQA questions never used to tune its rules (the last two of nine blind splits, 3,756 labelled answers in
all: ``benchmarks/grading_audit_real.py``; the answers are regenerated from the public files, the repository holds
hashes and labels), Cohen's κ = 0.75 [95% bootstrap 0.69, 0.81] counting ``uncertain`` as a disagreement, 0.82 on
the answers it decided (StrategyQA 0.75, TruthfulQA 0.65: few right answers), 3.1% of hand-wrong answers graded
correct (StrategyQA 5.0%: a right "No," before a false reason), 2.7% ``uncertain``; the rules before issue #21
graded 14% of hand-wrong answers correct. Earlier blind splits gave κ 0.67–0.78: the spread between labellers is
about as large as the margin (``benchmarks/real_data.md``). On the answers we wrote
(``datasets/data/grader_audit.jsonl``, a regression set) it agrees 96% (κ 0.94) — a written set overstates
agreement with real output.
Where its rules cannot decide, ``strict`` says so: ``label == "uncertain"``,
``correct`` None (count those; never read them as right).
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .graders import from_decision
from .grades import GRADE_LABELS, Correctness, Grader, grade_many, label_counts, references
from .grading_rules import Decision
from .llm_judge import JUDGE_SYSTEM, parse_verdict
from .text import normalise_answer

__all__ = ["CAREFUL", "GRADE_LABELS", "LABELS", "JUDGE_SYSTEM", "METHODS", "AnswerGrader", "Correctness", "Grader",
           "as_grader",
           "check_answer", "correctness_labels", "is_correct", "label_counts", "parse_verdict", "parse_yes_no"]

#: the built-in graders (the ``graders`` plugins this package registers)
METHODS = ("strict", "hassum", "normalised", "contains", "embedding", "llm")
#: the built-in graders that read the incorrect references and label refusals
CAREFUL = ("strict", "hassum")
#: the labels of a hand-labelled audit (a grader may also say ``uncertain``: :data:`GRADE_LABELS`)
LABELS = ("correct", "wrong", "refused")
YES = frozenset({"yes", "correct", "true", "right"})
NO = frozenset({"no", "incorrect", "false", "wrong"})
NEGATION = frozenset({"not", "t", "never", "neither", "nor"})  # "isn't" normalises to "isn t"
_OPTIONS = ("threshold", "seed", "max_tokens", "floor", "overlap", "paraphrase")


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
    return references(gold_aliases)


def as_grader(spec: Any, *, what: str = "grader") -> Any:
    """A ``graders`` plugin from what a setting holds: a name (``"strict"``, a researcher's ``"mine"``), a
    ``{"name", **params}`` table, the older ``{"method", **AnswerGrader options}`` table, a class or an instance
    with ``grade`` (an :class:`AnswerGrader` too). Resolved through ``registry.resolve("graders", spec)``."""
    from .. import registry

    if isinstance(spec, dict) and "method" in spec and "name" not in spec:
        return AnswerGrader(**spec)
    return registry.resolve("graders", spec, what=what)


@dataclass
class AnswerGrader:
    """A grader chosen by ``method`` (a ``graders`` plugin name: one of :data:`METHODS` or a registered one), with
    one flat set of options, each passed on to the plugin that declares it: ``threshold`` (``embedding``), an
    ``embedder`` (default: the shipped MiniLM), an ``llm`` (backend or ``get_llm`` spec; needed for ``llm``), the
    judge's ``seed`` and ``max_tokens``; ``floor`` (HASSUM's 0.65), ``overlap`` (``strict``'s content-word F1 for a
    paraphrase) and ``paraphrase`` (``"tokens"`` or ``"embedding"``). Kept for the code written before graders
    were plugins; :meth:`grade` makes it a grader itself."""

    method: str = "normalised"
    threshold: float = 0.8
    embedder: Any = None
    llm: Any = None
    seed: int = 0
    max_tokens: int = 8
    floor: float = 0.65
    overlap: float = 0.5
    paraphrase: str = "tokens"
    _plugin: Any = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self):
        from .. import registry

        known = registry.names("graders")
        if self.method not in known:
            close = difflib.get_close_matches(str(self.method), known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ValueError(f"method must be a grader: one of {known or list(METHODS)}, got {self.method!r}{hint}"
                             + ("" if known else " (no graders are installed: run pip install -e . again)"))
        if not -1.0 <= float(self.threshold) <= 1.0:
            raise ValueError(f"threshold is a cosine similarity in [-1, 1], got {self.threshold!r}")
        if self.method == "llm" and self.llm is None:
            raise ValueError("method='llm' needs llm=<a backend or a spec such as 'embedded'>")
        for name in ("floor", "overlap"):
            if not 0.0 <= float(getattr(self, name)) <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {getattr(self, name)!r}")
        if self.paraphrase not in ("tokens", "embedding"):
            raise ValueError(f"paraphrase must be 'tokens' or 'embedding', got {self.paraphrase!r}")
        self._plugin = registry.resolve("graders", {"name": self.method, **self._params(registry.get("graders",
                                                                                                  self.method))},
                                        what=f"grader {self.method!r}")

    def _params(self, cls: type) -> dict[str, Any]:
        """The options ``cls`` accepts; a plain option only when it differs from this class's default (so a
        researcher's grader keeps its own defaults), the embedder and the llm whenever given."""
        accepts = {f.name for f in dataclasses.fields(cls) if f.init} if dataclasses.is_dataclass(cls) else set()
        defaults = {f.name: f.default for f in dataclasses.fields(AnswerGrader)}
        out = {k: getattr(self, k) for k in _OPTIONS if k in accepts and getattr(self, k) != defaults[k]}
        out.update({k: getattr(self, k) for k in ("embedder", "llm") if k in accepts and getattr(self, k) is not None})
        return out

    @property
    def plugin(self) -> Any:
        """The ``graders`` plugin instance doing the work (its embedder follows this object's)."""
        if self.embedder is not None and getattr(self._plugin, "embedder", self.embedder) is None:
            self._plugin.embedder = self.embedder
        return self._plugin

    @property
    def name(self) -> str:
        """The grader's label: the method, with ``+embedding`` when ``strict`` reads paraphrases by embedding."""
        return getattr(self._plugin, "label", None) or self.method

    @property
    def summary(self) -> str:
        return getattr(self._plugin, "summary", "") or ""

    @property
    def reads_incorrect(self) -> bool:
        return bool(getattr(self._plugin, "reads_incorrect", False))

    def needs_embedder(self) -> bool:
        need = getattr(self._plugin, "needs_embedder", None)
        return bool(need()) if callable(need) else False

    def _synced(self, out):
        if self.embedder is None and getattr(self._plugin, "embedder", None) is not None:
            self.embedder = self._plugin.embedder
        return out

    def grade(self, answer: str, correct: Sequence[str] | str, incorrect: Sequence[str] = (),
              question: str | None = None) -> Correctness:
        """The ``graders`` protocol: :meth:`check` with the references first."""
        return self._synced(self.plugin.grade(answer, correct, incorrect, question))

    def check(self, answer: str, gold_aliases: Sequence[str] | str, question: str | None = None,
              incorrect: Sequence[str] = ()) -> Correctness:
        """Grade one answer against its gold aliases (``question`` is shown to the LLM judge and read by the
        yes/no verdict; ``incorrect`` references are read by ``strict``, ``hassum`` and ``llm``)."""
        return self.grade(answer, gold_aliases, incorrect, question)

    def check_many(self, answers: Sequence[str], golds: Sequence[Sequence[str] | str],
                   questions: Sequence[str] | None = None,
                   incorrect: Sequence[Sequence[str]] | None = None) -> list[Correctness]:
        """Grade answers[i] against golds[i] (and incorrect[i]); embeddings are computed in one batch."""
        return self._synced(grade_many(self.plugin, answers, golds, incorrect, questions))

    def _careful(self, d: Decision) -> Correctness:
        """A rule's decision as a grading (``uncertain`` → ``correct=None, uncertain=True``)."""
        return from_decision(d, self.name)

    def judge_messages(self, answer: str, aliases: Sequence[str], question: str | None = None,
                       incorrect: Sequence[str] = ()) -> list[dict[str, str]]:
        """The chat messages the LLM judge is sent."""
        return self.plugin.messages(answer, list(aliases), list(incorrect), question)


def check_answer(answer: str, gold_aliases: Sequence[str] | str, method: str = "normalised", *,
                 question: str | None = None, incorrect: Sequence[str] = (), **options) -> Correctness:
    """Grade ``answer`` with the named ``method``; ``options`` configure :class:`AnswerGrader`."""
    return AnswerGrader(method, **options).check(answer, gold_aliases, question, incorrect)


def is_correct(answer: str, gold_aliases: Sequence[str] | str, method: str = "normalised", *,
               question: str | None = None, incorrect: Sequence[str] = (), **options) -> bool | None:
    """True/False (a refusal is False: read :attr:`Correctness.label`), or None when the grader is uncertain
    (count those)."""
    return check_answer(answer, gold_aliases, method, question=question, incorrect=incorrect, **options).correct


def correctness_labels(results: Sequence[Correctness], *, unjudged: str = "raise") -> tuple[np.ndarray, np.ndarray]:
    """(labels, kept): boolean labels of the judged results and their indices. ``unjudged="raise"`` refuses
    uncertain or unparsed gradings, naming how many of each label; ``"drop"`` leaves them out (report them:
    :func:`label_counts`)."""
    if unjudged not in ("raise", "drop"):
        raise ValueError(f"unjudged must be 'raise' or 'drop', got {unjudged!r}")
    missing = [i for i, r in enumerate(results) if r.correct is None]
    if missing and unjudged == "raise":
        counts = {k: v for k, v in label_counts(results).items() if v}
        raise ValueError(f"{len(missing)} of {len(results)} answers are unjudged (labels: {counts}; e.g. index "
                         f"{missing[0]}: {results[missing[0]].evidence}); pass unjudged='drop' and report the "
                         "uncertain count")
    kept = np.array([i for i, r in enumerate(results) if r.correct is not None], dtype=int)
    return np.array([results[i].correct for i in kept], dtype=bool), kept
