"""Verbalised confidence: ask the model how sure it is of an answer (Lin, Hilton & Evans 2022; Tian et
al. 2023). The one metric that calls a model itself, through its ``llm`` parameter; it scores the greedy
answer when the sample set has one, else sample 0.

The reply is read leniently in wording, strictly in number (:func:`read_confidence`): "85", "85%", "Confidence:
0.85", "17/20". A reply with no plainly written number in [0, 100] (none at all, a negative, "inf", hex "0x50",
"1e2", above 100) gives a missing value (NaN) saying why, with the raw text in ``details`` — never a default.
Confidence = c/100; uncertainty = normalised uncertainty = 1 − c/100.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .judges_base import resolve_llm
from .metrics import Metric, MetricResult
from .samples import SampleSet

__all__ = ["VERBALIZED_PROMPT", "VerbalizedConfidence", "parse_confidence", "read_confidence"]

VERBALIZED_PROMPT = (
    "Question: {question}\nProposed answer: {answer}\n"
    "How confident are you that the proposed answer is correct? "
    "Reply with a single number from 0 (surely wrong) to 100 (surely right)."
)

#: a number as a reply might write it, plainly or not: a sign, hex, a decimal, an exponent, letters glued after it
_NUM = r"[-+\u2212]?(?:0x[0-9a-f]+|\d+(?:\.\d+)?|\.\d+)(?:e[-+]?\d+)?"
_READING = re.compile(
    rf"(?<![\w.])(?P<num>{_NUM})(?P<tail>[a-z_]\w*)?"
    rf"(?:\s*(?P<pct>%|percent\b)|\s*(?:/|out of)\s*(?P<den>{_NUM})(?![\w.]))?"
    r"|(?P<word>\b(?:inf|infinity|nan)\b|∞)")


def _unplain(num: str) -> str | None:
    """Why ``num`` is not a plain non-negative number (hex, scientific notation, a minus sign), or None."""
    if "0x" in num:
        return f"{num!r} is hexadecimal, not a plain number"
    if "e" in num:
        return f"{num!r} is in scientific notation, not a plain number"
    if num[0] in "-\u2212":
        return f"{num!r} is negative"
    return None


def read_confidence(text: str) -> tuple[float | None, str | None]:
    """``(confidence in [0, 100], None)`` from a reply, or ``(None, why it is unreadable)``.

    The first number counts, written plainly: "85", "85%", "62.5 percent", "Confidence: 0.85" (a bare decimal in
    [0, 1] is a probability), "17/20" or "7 out of 10" (scaled to 100). A negative, infinite or NaN value, hex
    ("0x50"), scientific notation ("1e2"), letters glued to the number ("85th"), a zero denominator or anything
    above 100 is unreadable — never silently some other number."""
    if not isinstance(text, str):
        return None, f"the reply is not text ({type(text).__name__})"
    m = _READING.search(text.lower().replace(",", "."))
    if m is None:
        return None, "the reply holds no number"
    if m.group("word"):
        return None, f"{m.group('word')!r} is not a finite number"
    num, den = m.group("num"), m.group("den")
    why = _unplain(num) or (_unplain(den) if den else None)
    if why is None and m.group("tail"):
        why = f"{num + m.group('tail')!r} is not a plain number"
    if why is not None:
        return None, why
    value = float(num.lstrip("+"))
    if den is not None:
        if float(den.lstrip("+")) <= 0:
            return None, f"{num}/{den} divides by zero"
        value = 100.0 * value / float(den.lstrip("+"))
    elif m.group("pct") is None and "." in num and value <= 1.0:
        value *= 100.0
    if value > 100.0:
        return None, f"{value:g} is above 100"
    return value, None


def parse_confidence(text: str) -> float | None:
    """A 0–100 confidence from free text, or None when it holds no plainly written one (:func:`read_confidence`
    says why)."""
    return read_confidence(text)[0]


@dataclass
class VerbalizedConfidence(Metric):
    """Asks the model for a 0–100 confidence in the target answer (see the module doc)."""

    name: ClassVar[str] = "verbalized_confidence"
    summary: ClassVar[str] = "asks the model for a 0-100 confidence in its answer (one extra call)"
    reference: ClassVar[str] = "Lin, Hilton & Evans 2022; Tian et al. 2023"
    min_samples: ClassVar[int] = 0

    llm: Any = field(default="embedded", metadata={"help": "a backend spec ('embedded', 'auto', 'ollama:<model>') or a backend instance"})
    max_tokens: int = field(default=12, metadata={"min": 1, "max": 256, "step": 1, "help": "tokens the reply may use"})
    temperature: float = field(default=0.0, metadata={"min": 0.0, "max": 2.0, "step": 0.05, "help": "0 = the model's most likely reply"})
    seed: int = field(default=0, metadata={"min": 0, "max": 2**31 - 1, "help": "sampling seed"})

    def __post_init__(self):
        self.llm = resolve_llm(self.llm)

    def missing_reason(self, samples: SampleSet) -> str | None:
        if samples.greedy is None and samples.n == 0:
            error = samples.meta.get("error")
            return "no answer to rate (no greedy answer and no samples)" + (f"; sampling failed: {error}" if error else "")
        return None

    def _score(self, samples: SampleSet) -> MetricResult:
        answer, source = (samples.greedy, "greedy") if samples.greedy is not None else (samples.texts[0], "sample 0")
        prompt = VERBALIZED_PROMPT.format(question=samples.question or "(not given)", answer=answer)
        (c,) = self.llm.complete(prompt, n=1, temperature=self.temperature, seed=self.seed, max_tokens=self.max_tokens)
        value, why = read_confidence(c.text)
        details = {"raw": c.text, "target": answer, "target_source": source, "parsed": value}
        if value is None:
            return MetricResult.missing_value(self.name, f"the reply holds no readable 0-100 confidence: {why}",
                                              **details)
        conf = value / 100.0
        return self._result(1.0 - conf, conf, 1.0 - conf, **details)
