"""Verbalised confidence: ask the model how sure it is of an answer (Lin, Hilton & Evans 2022; Tian et
al. 2023). The one metric that calls a model itself, through its ``llm`` parameter; it scores the greedy
answer when the sample set has one, else sample 0.

The reply is read leniently (:func:`parse_confidence`): "85", "85%", "Confidence: 0.85", "17/20". A reply
with no readable number gives a missing value (NaN) with the raw text in ``details`` — never a default.
Confidence = c/100; uncertainty = normalised uncertainty = 1 − c/100.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .judges_base import resolve_llm
from .metrics import Metric, MetricResult
from .samples import SampleSet

__all__ = ["VERBALIZED_PROMPT", "VerbalizedConfidence", "parse_confidence"]

VERBALIZED_PROMPT = (
    "Question: {question}\nProposed answer: {answer}\n"
    "How confident are you that the proposed answer is correct? "
    "Reply with a single number from 0 (surely wrong) to 100 (surely right)."
)

_FRACTION = re.compile(r"(\d+(?:\.\d+)?)\s*(?:/|out of)\s*(\d+(?:\.\d+)?)")
_NUMBER = re.compile(r"(\d+(?:\.\d+)?)\s*(%|percent)?")


def parse_confidence(text: str) -> float | None:
    """A 0–100 confidence from free text, or None: the first number; "x/y" or "x out of y" scales to 100;
    a bare decimal in [0, 1] ("0.8") is read as a probability; anything above 100 is unreadable."""
    if not isinstance(text, str):
        return None
    t = text.lower().replace(",", ".")
    frac, num = _FRACTION.search(t), _NUMBER.search(t)
    if frac is not None and (num is None or frac.start() <= num.start()):
        top, bottom = float(frac.group(1)), float(frac.group(2))
        value = 100.0 * top / bottom if bottom > 0 else None
    elif num is not None:
        value = float(num.group(1))
        if num.group(2) is None and "." in num.group(1) and value <= 1.0:
            value *= 100.0
    else:
        return None
    if value is None or not 0.0 <= value <= 100.0:
        return None
    return value


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
        value = parse_confidence(c.text)
        details = {"raw": c.text, "target": answer, "target_source": source, "parsed": value}
        if value is None:
            return MetricResult.missing_value(self.name, "the reply holds no readable 0-100 confidence", **details)
        conf = value / 100.0
        return self._result(1.0 - conf, conf, 1.0 - conf, **details)
