"""The entailment judges: ``llm_entailment`` (asks any language model) and ``nli_cross_encoder`` (a local NLI model).

Both give directed verdicts A ⇒ B (entailment / neutral / contradiction with probabilities) that
:class:`~uncertainty_lab.semantic.judges_base.NLIJudge` caches and combines, both ways, with a ``relation``.
An LLM's free-text reply is read leniently by :func:`parse_nli_label`; an unreadable one counts as neutral
and is reported as a parse failure, never hidden.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from .judges_base import LABELS, ONE_HOT, NLIJudge, Verdict, resolve_llm

__all__ = ["ENTAILMENT_PROMPT", "LLMEntailmentJudge", "NLICrossEncoderJudge", "parse_nli_label"]

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
                out.append(Verdict("neutral", ONE_HOT["neutral"], c.text, parsed=False))
            else:
                out.append(Verdict(label, ONE_HOT[label], c.text))
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
