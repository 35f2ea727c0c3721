"""Two ``metrics`` plugins that read the meaning classes (or the greedy answer) of a sample set.

Both subclass the core's :class:`~uncertainty_lab.semantic.metrics.JudgedMetric`, so they take the same ``judge``
parameter as the built-in clustering metrics (a registered judge name or an instance) and return a
:class:`~uncertainty_lab.semantic.MetricResult` (``uncertainty``, ``confidence`` in [0, 1],
``normalised_uncertainty``, ``details``); too few samples, or no greedy answer, give a *missing* result.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Literal

from uncertainty_lab.semantic import MetricResult, SampleSet, cluster
from uncertainty_lab.semantic.metrics import JudgedMetric


@dataclass
class ClusterMargin(JudgedMetric):
    """The margin between the two largest meaning classes: uncertainty = |C₂| / |C₁| (0 when one class holds
    every sample, 1 when the two largest tie), confidence = 1 − |C₂| / |C₁|.

    Unlike entropy it ignores the tail: answers split 6 / 1 / 1 / 1 / 1 have margin 1 − 1/6 — a clear winner —
    though their entropy is high. That is the question a majority vote asks ("is there a clear winner?").
    """

    name: ClassVar[str] = "cluster_margin"
    summary: ClassVar[str] = "1 − (second-largest meaning class / largest): is there a clear winner? (ul_examples)"
    reference: ClassVar[str] = "margin of the plurality vote over meaning classes (cf. self-consistency, Wang et al. 2023)"

    clustering: Literal["greedy", "transitive"] = field(default="greedy", metadata={
        "choices": ("greedy", "transitive"),
        "help": "greedy representatives (Kuhn et al.) or transitive closure of all pair judgements"})

    def _score(self, samples: SampleSet) -> MetricResult:
        c = cluster(samples.texts, self._judge, samples.question, self.clustering)
        sizes = sorted(c.sizes, reverse=True)
        ratio = sizes[1] / sizes[0] if len(sizes) > 1 else 0.0
        return self._result(ratio, 1.0 - ratio, ratio, sizes=sizes, n_clusters=c.n_clusters, labels=list(c.labels),
                            judge=self.judge_label(), clustering=c.method)


@dataclass
class GreedyAgreement(JudgedMetric):
    """Self-consistency with the greedy answer: confidence = the share of sampled answers that the judge finds
    equivalent to the greedy (temperature-0) answer; uncertainty = 1 − confidence.

    Needs ``SampleSet.greedy`` (``sample_answers(..., greedy=True)``); without it the result is missing, never
    a clean score. The greedy answer is what a user is shown, so this asks "how often would sampling have
    said something else?".
    """

    name: ClassVar[str] = "greedy_agreement"
    summary: ClassVar[str] = "share of sampled answers that mean the same as the greedy answer (needs greedy) (ul_examples)"
    reference: ClassVar[str] = "self-consistency with the most likely answer (cf. Manakul et al. 2023, SelfCheckGPT)"

    def missing_reason(self, samples: SampleSet) -> str | None:
        if samples.greedy is None:
            return "no greedy answer: sample one with sample_answers(..., greedy=True) or SampleSet(greedy=...)"
        return super().missing_reason(samples)

    def _score(self, samples: SampleSet) -> MetricResult:
        judge, g = self._judge, samples.greedy
        if callable(getattr(judge, "judge_pairs", None)):  # batched and cached (the core's judges)
            agree = [j.equivalent for j in judge.judge_pairs(samples.question, [(g, t) for t in samples.texts])]
        else:  # a judge that only has the protocol method
            agree = [bool(judge.equivalent(samples.question, g, t)) for t in samples.texts]
        share = sum(agree) / samples.n
        return self._result(1.0 - share, share, 1.0 - share, agrees=agree, greedy=g, judge=self.judge_label())
