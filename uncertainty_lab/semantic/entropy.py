"""Entropy-family metrics: semantic entropy (likelihood-weighted and discrete), number of semantic sets,
predictive entropy; and the reachable values of discrete semantic entropy for n samples.

Entropies use the natural log. With n samples every entropy here is at most ln n, so thresholds are
best stated on the normalised scale H / ln n (``normalised_uncertainty``): HASSUM's τ_E = 1.65 is above
ln 5 = 1.609 and can never fire with 5 samples (:func:`reachable_entropies`, HASSUM §6).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
from scipy.special import logsumexp

from .metrics import Metric, MetricResult, _Clustered
from .samples import SampleSet

__all__ = [
    "DiscreteSemanticEntropy",
    "NumSemanticSets",
    "PredictiveEntropy",
    "SemanticEntropy",
    "entropy_of_partition",
    "max_entropy",
    "partitions",
    "partitions_above",
    "reachable_entropies",
]

MAX_PARTITION_N = 40  # p(40) = 37,338 partitions; p(60) would be about a million


def partitions(n: int):
    """The integer partitions of ``n`` as non-increasing tuples, from (n,) down to (1, …, 1)."""
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")

    def rec(remaining: int, largest: int):
        if remaining == 0:
            yield ()
            return
        for first in range(min(remaining, largest), 0, -1):
            for rest in rec(remaining - first, first):
                yield (first, *rest)

    yield from rec(n, n)


def entropy_of_partition(sizes) -> float:
    """Discrete semantic entropy −Σ (|C|/N) ln(|C|/N) of cluster sizes (HASSUM Eq. 1)."""
    sizes = np.asarray([s for s in sizes if s > 0], dtype=float)
    if sizes.size == 0:
        raise ValueError("sizes must contain at least one positive cluster size")
    p = sizes / sizes.sum()
    return float(-(p * np.log(p)).sum()) + 0.0  # + 0.0 turns -0.0 into 0.0


def max_entropy(n: int) -> float:
    """ln n: the largest entropy n samples can show (every sample its own class)."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n!r}")
    return math.log(n)


def reachable_entropies(n: int) -> list[tuple[tuple[int, ...], float]]:
    """Every partition of n samples into meaning classes with its discrete semantic entropy, sorted by
    entropy. With n = 5 the values are 0, 0.500, 0.673, 0.950, 1.055, 1.332, 1.609 (= ln 5)."""
    if isinstance(n, int) and n > MAX_PARTITION_N:
        raise ValueError(f"n = {n} has too many partitions to list; use n <= {MAX_PARTITION_N}")
    return sorted(((p, entropy_of_partition(p)) for p in partitions(n)), key=lambda x: (x[1], x[0]))


def partitions_above(threshold: float, n: int) -> list[tuple[tuple[int, ...], float]]:
    """The partitions of n samples whose discrete entropy exceeds ``threshold`` — the only outcomes on
    which an entropy gate at that threshold fires (an empty list: it never fires)."""
    return [(p, h) for p, h in reachable_entropies(n) if h > threshold]


def _entropy(p: np.ndarray) -> float:
    p = p[p > 0]
    return float(-(p * np.log(p)).sum()) + 0.0  # + 0.0 turns -0.0 into 0.0


def _entropy_result(metric: Metric, h: float, n: int, **details) -> MetricResult:
    norm = min(1.0, max(0.0, h / math.log(n)))
    if math.isclose(norm, 1.0, rel_tol=1e-12):  # all distinct: rounding gave 0.9999999999999998 at n = 3
        norm = 1.0
    return metric._result(h, 1.0 - norm, norm, max_entropy=math.log(n), **details)


@dataclass
class SemanticEntropy(_Clustered):
    """Likelihood-weighted semantic entropy (Kuhn et al. 2023; Farquhar et al. 2024).

    p(s_i|x) is length-normalised: w_i = exp((1/L_i) Σ_t log p(token_t)), the geometric-mean token
    probability. Cluster mass p(C) = Σ_{i∈C} w_i over *all* samples (duplicates included, as Farquhar et
    al.'s code does), renormalised over the clusters found, p̄(C) = p(C) / Σ_C' p(C'), so
    0 ≤ SE = −Σ_C p̄(C) ln p̄(C) ≤ ln |C| ≤ ln n. Needs token logprobs; without them the result is missing.
    When all w_i are equal SE equals the discrete entropy. Confidence = 1 − SE / ln n.
    """

    name: ClassVar[str] = "semantic_entropy"
    summary: ClassVar[str] = "likelihood-weighted entropy over meaning classes (needs logprobs)"
    reference: ClassVar[str] = "Kuhn, Gal & Farquhar, ICLR 2023; Farquhar et al., Nature 2024"
    needs_logprobs: ClassVar[bool] = True

    def _score(self, samples: SampleSet) -> MetricResult:
        c = self._cluster(samples)
        lw = samples.length_normalised_logprobs
        log_mass = np.array([logsumexp(lw[members]) for members in c.clusters])
        log_p = log_mass - logsumexp(log_mass)
        p = np.exp(log_p)
        h = _entropy(p)
        weights = np.exp(lw - logsumexp(lw))
        return _entropy_result(
            self, h, samples.n, cluster_probabilities=p.tolist(), sample_weights=weights.tolist(),
            normalisation="w_i = exp(mean token logprob); p(C) = sum of w_i in C, renormalised over clusters",
            **self._cluster_details(c, samples.question))


@dataclass
class DiscreteSemanticEntropy(_Clustered):
    """Discrete semantic entropy, HASSUM Eq. 1: p(C) = |C| / N, H = −Σ p(C) ln p(C) ∈ [0, ln N].
    Confidence = 1 − H / ln N. Needs no logprobs."""

    name: ClassVar[str] = "discrete_semantic_entropy"
    summary: ClassVar[str] = "entropy of meaning-class frequencies (HASSUM Eq. 1); no logprobs needed"
    reference: ClassVar[str] = "Farquhar et al., Nature 2024; HASSUM Eq. 1"

    def _score(self, samples: SampleSet) -> MetricResult:
        c = self._cluster(samples)
        p = np.asarray(c.sizes, dtype=float) / samples.n
        return _entropy_result(self, _entropy(p), samples.n, cluster_probabilities=p.tolist(),
                               **self._cluster_details(c, samples.question))


@dataclass
class NumSemanticSets(_Clustered):
    """The number K of meaning classes (Lin et al. 2023, "NumSet"). Normalised (K − 1)/(n − 1);
    confidence = 1 − that (1 for one class, 0 for n classes)."""

    name: ClassVar[str] = "num_semantic_sets"
    summary: ClassVar[str] = "number of meaning classes among the samples"
    reference: ClassVar[str] = "Lin, Trivedi & Sun 2023, Generating with Confidence"

    def _score(self, samples: SampleSet) -> MetricResult:
        c = self._cluster(samples)
        norm = (c.n_clusters - 1) / (samples.n - 1)
        return self._result(c.n_clusters, 1.0 - norm, norm, **self._cluster_details(c, samples.question))


@dataclass
class PredictiveEntropy(Metric):
    """Monte-Carlo predictive entropy from the samples' own log-probabilities (Malinin & Gales 2021).

    Length-normalised (default): PE = −(1/n) Σ_i (1/L_i) Σ_t log p(token_t); otherwise the un-normalised
    PE = −(1/n) Σ_i log p(s_i|x), which grows with answer length. Confidence = exp(−PE): the geometric
    mean over samples of the (per-token geometric-mean) probability, in (0, 1]. Normalised = 1 − confidence.
    Duplicates count as drawn. Needs token logprobs.
    """

    name: ClassVar[str] = "predictive_entropy"
    summary: ClassVar[str] = "minus the mean (length-normalised) log-probability of the samples (needs logprobs)"
    reference: ClassVar[str] = "Malinin & Gales, ICLR 2021; Kuhn et al. 2023 (baseline)"
    min_samples: ClassVar[int] = 1
    needs_logprobs: ClassVar[bool] = True

    length_normalised: bool = field(default=True, metadata={
        "help": "average token log-probability per sample (True) or the summed sequence log-probability (False)"})

    def _score(self, samples: SampleSet) -> MetricResult:
        lp = samples.length_normalised_logprobs if self.length_normalised else samples.sequence_logprobs
        pe = float(-np.mean(lp))
        conf = math.exp(-pe)
        lengths = [len(t) for t in samples.logprobs]
        return self._result(pe, conf, 1.0 - conf, length_normalised=self.length_normalised,
                            sample_logprobs=lp.tolist(), token_counts=lengths)

