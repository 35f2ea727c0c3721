"""cluster_margin and greedy_agreement against hand-computed cases."""

from __future__ import annotations

import pytest
from uncertainty_lab.semantic import MetricResult, SampleSet

from ul_examples.metrics import ClusterMargin, GreedyAgreement


@pytest.mark.parametrize(("texts", "margin_uncertainty"), [
    (["Paris", "paris", "Paris", "Rome", "Rome"], 2 / 3),  # classes 3 / 2
    (["Paris", "Rome", "Oslo", "Paris", "Rome", "Oslo"], 1.0),  # a three-way tie: no winner
    (["Paris", "the Paris", "PARIS."], 0.0),  # one class (the exact judge normalises case, articles, punctuation)
    (["a", "a", "a", "a", "a", "a", "b", "c", "d", "e"], 1 / 6),  # a clear winner despite a long tail
])
def test_cluster_margin_by_hand(texts, margin_uncertainty):
    r = ClusterMargin().score(texts)
    assert isinstance(r, MetricResult) and r.metric == "cluster_margin"
    assert r.uncertainty == pytest.approx(margin_uncertainty)
    assert r.normalised_uncertainty == pytest.approx(margin_uncertainty)
    assert r.confidence == pytest.approx(1 - margin_uncertainty)


def test_cluster_margin_details_and_missing():
    r = ClusterMargin().score(SampleSet.from_texts(["Paris", "Rome", "paris"], question="capital of France?"))
    assert r.details["sizes"] == [2, 1] and r.details["judge"] == "exact" and r.details["clustering"] == "greedy"
    assert ClusterMargin().score(["Paris"]).missing


def test_greedy_agreement_by_hand():
    s = SampleSet.from_texts(["Paris", "paris", "Rome", "Lyon"], question="capital?", greedy="Paris")
    r = GreedyAgreement().score(s)
    assert (r.confidence, r.uncertainty) == pytest.approx((0.5, 0.5))
    assert r.details["agrees"] == [True, True, False, False]


def test_greedy_agreement_without_greedy_is_missing_not_confident():
    r = GreedyAgreement().score(["Paris", "Paris"])
    assert r.missing and "greedy" in r.details["missing"]


def test_greedy_agreement_accepts_a_judge_with_only_the_protocol_method():
    class FirstLetter:
        def equivalent(self, question, a, b):
            return a[:1].lower() == b[:1].lower()

    s = SampleSet.from_texts(["Paris", "Prague", "Rome"], greedy="paris")
    assert GreedyAgreement(judge=FirstLetter()).score(s).confidence == pytest.approx(2 / 3)
