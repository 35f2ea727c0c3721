"""A ``metrics`` plugin: how much the sampled answers differ in length.

Protocol (see ``uncertainty_lab.semantic.metrics``): ``score(samples) -> MetricResult`` with
``uncertainty`` (natural scale, higher = less sure), ``confidence`` in [0, 1], ``normalised_uncertainty``
in [0, 1] and ``details``. Subclassing :class:`~uncertainty_lab.semantic.Metric` gives the checks the
built-ins share: a plain list of strings is accepted, and too few samples give a *missing* result (NaN,
with ``details["missing"]`` saying why) instead of a clean score.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Literal

import numpy as np
from uncertainty_lab.contracts import Metric, MetricResult, SampleSet


@dataclass
class AnswerLengthSpread(Metric):
    """Coefficient of variation of the answers' lengths, cv = std / mean (0 when all have the same length).

    normalised = min(1, cv / cv_max); confidence = 1 − normalised. A teaching toy, and a weak signal: two
    answers of equal length can mean opposite things ("yes" / "no"), and one meaning can be said briefly or
    at length. Compare it with ``discrete_semantic_entropy`` in the notebooks to see why meaning matters.
    """

    name: ClassVar[str] = "answer_length_spread"
    summary: ClassVar[str] = "spread of answer lengths (std / mean): a cheap, meaning-blind toy signal (template)"
    reference: ClassVar[str] = "uncertainty-lab plugin template"
    min_samples: ClassVar[int] = 2

    unit: Literal["words", "characters"] = field(
        default="words", metadata={"choices": ("words", "characters"), "help": "measure answers in words or characters"}
    )
    cv_max: float = field(
        default=1.0,
        metadata={"min": 0.05, "max": 5.0, "step": 0.05, "help": "the spread counted as fully uncertain (normalised = 1)"},
    )

    def _score(self, samples: SampleSet) -> MetricResult:
        lengths = np.array([len(t.split()) if self.unit == "words" else len(t) for t in samples.texts], dtype=float)
        mean = float(lengths.mean())
        cv = float(lengths.std() / mean) if mean > 0 else 0.0
        normalised = min(1.0, cv / self.cv_max)
        return self._result(cv, 1.0 - normalised, normalised, lengths=lengths.tolist(), unit=self.unit,
                            mean_length=mean)
