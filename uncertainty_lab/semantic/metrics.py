"""What every uncertainty metric returns, the base class of the built-in ``metrics`` plugins, and
``score_all`` to run several metrics on one sample set.

Every metric maps a :class:`SampleSet` to a :class:`MetricResult`:

- ``uncertainty``: the metric's natural scale, higher = less sure (entropy in nats, number of sets, …);
- ``normalised_uncertainty``: the same on [0, 1] between the metric's extremes for this sample count
  (e.g. H / ln n), so one threshold means the same for any n;
- ``confidence`` in [0, 1], higher = more sure; each metric's docstring states its mapping;
- ``details``: what a learner needs to see why (clusters, probabilities, kernel values, the variant run…).

**Missing is not confident**: too few samples, no logprobs where a metric needs them, or a failed
sampling run give NaN uncertainty and confidence with ``details["missing"]`` saying why — never a clean
score (HASSUM §6).

The metric families live in their own modules: ``entropy`` (semantic_entropy, discrete_semantic_entropy,
num_semantic_sets, predictive_entropy), ``density`` (semantic_density), ``graph`` (eigval_laplacian,
degree, eccentricity), ``lexical`` (lexical_similarity), ``verbalized`` (verbalized_confidence).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .judges_base import resolve_judge
from .samples import SampleSet, as_sample_set

__all__ = ["JudgedMetric", "Metric", "MetricResult", "score_all"]


@dataclass(frozen=True)
class MetricResult:
    """The uniform result of a metric (see the module doc)."""

    metric: str
    uncertainty: float
    confidence: float
    normalised_uncertainty: float
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def missing(self) -> bool:
        """True when the metric could not be computed (NaN confidence; ``details["missing"]`` says why)."""
        return math.isnan(self.confidence)

    @classmethod
    def missing_value(cls, metric: str, reason: str, **details: Any) -> MetricResult:
        return cls(metric, math.nan, math.nan, math.nan, {"missing": reason, **details})

    def to_dict(self) -> dict[str, Any]:
        return {"metric": self.metric, "uncertainty": self.uncertainty, "confidence": self.confidence,
                "normalised_uncertainty": self.normalised_uncertainty, "details": self.details}

    def __repr__(self) -> str:
        extra = f", missing={self.details.get('missing')!r}" if self.missing else ""
        return (f"MetricResult({self.metric}: uncertainty={self.uncertainty:.4g}, confidence={self.confidence:.4g}, "
                f"normalised={self.normalised_uncertainty:.4g}{extra})")


def _clip01(x: float) -> float:
    """Clip to [0, 1] (guards rounding, e.g. 1 - H/ln n = -1e-16); NaN stays NaN."""
    x = float(x)
    return x if math.isnan(x) else min(1.0, max(0.0, x))


@dataclass
class Metric:
    """Base of the built-in metrics: checks the sample set, then calls :meth:`_score`.

    Subclasses set ``name``, ``summary``, ``reference``, ``min_samples`` and ``needs_logprobs`` and
    implement ``_score(samples) -> MetricResult``.
    """

    name: ClassVar[str] = "base"
    summary: ClassVar[str] = ""
    reference: ClassVar[str] = ""
    min_samples: ClassVar[int] = 2
    needs_logprobs: ClassVar[bool] = False

    def score(self, samples: SampleSet | Sequence[str]) -> MetricResult:
        """Score one sample set (or a plain list of texts)."""
        samples = as_sample_set(samples)
        reason = self.missing_reason(samples)
        if reason is not None:
            return MetricResult.missing_value(self.name, reason, n_samples=samples.n)
        return self._score(samples)

    def missing_reason(self, samples: SampleSet) -> str | None:
        """Why this sample set cannot be scored, or None."""
        if samples.n < self.min_samples:
            why = f"{samples.n} sample(s); {self.name} needs at least {self.min_samples}"
            error = samples.meta.get("error")
            return f"{why} (sampling failed: {error})" if error else why
        if self.needs_logprobs:
            return samples.missing_logprobs_reason()
        return None

    def _score(self, samples: SampleSet) -> MetricResult:
        raise NotImplementedError

    def _result(self, uncertainty: float, confidence: float, normalised: float, **details: Any) -> MetricResult:
        return MetricResult(self.name, float(uncertainty), _clip01(confidence), _clip01(normalised), details)


@dataclass
class JudgedMetric(Metric):
    """A metric that needs an equivalence judge (a registered name or an instance)."""

    judge: Any = field(default="exact", metadata={
        "help": "equivalence judge: a name (exact, embedding, llm_entailment, nli_cross_encoder) or a judge instance"})

    def __post_init__(self):
        self._judge = resolve_judge(self.judge)

    def judge_label(self) -> str:
        return self.judge if isinstance(self.judge, str) else getattr(self._judge, "name", type(self._judge).__name__)


@dataclass
class _Clustered(JudgedMetric):
    clustering: str = field(default="greedy", metadata={
        "choices": ("greedy", "transitive"),
        "help": "greedy representatives (Kuhn et al.) or transitive closure of all pair judgements"})

    def _cluster(self, samples: SampleSet):
        from .clustering import cluster

        return cluster(samples.texts, self._judge, samples.question, self.clustering)

    def _cluster_details(self, c, question: str = "") -> dict[str, Any]:
        d = {"judge": self.judge_label(), "clustering": c.method, "labels": list(c.labels), "clusters": c.clusters,
             "cluster_texts": [c.texts[members[0]] for members in c.clusters], "n_clusters": c.n_clusters}
        if c.parse_failures:
            d["parse_failures"] = list(c.parse_failures)
        truncated = getattr(self._judge, "truncated", None)
        if callable(truncated):  # an embedding judge reads only a text's first word pieces
            d["truncated"] = truncated(question, list(c.texts))
        return d


def score_all(samples: SampleSet | Sequence[str], metrics: Iterable[Any] = ("discrete_semantic_entropy", "semantic_density"),
              **shared: Any) -> dict[str, MetricResult]:
    """Score one sample set with several metrics (names or instances). ``shared`` parameters (e.g.
    ``judge=...``) go to every named metric that declares them."""
    from .. import registry
    from ..parameters import parameters

    samples = as_sample_set(samples)
    out: dict[str, MetricResult] = {}
    for m in metrics:
        if isinstance(m, str):
            declared = {p.name for p in parameters(registry.get("metrics", m))}
            m = registry.create("metrics", m, **{k: v for k, v in shared.items() if k in declared})
        result = m.score(samples)
        out[getattr(m, "name", type(m).__name__)] = result
    return out
