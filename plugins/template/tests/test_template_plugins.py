"""Each plugin of the template against its kind's protocol and hand-computed cases (no registry needed)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import trapezoid
from uncertainty_lab import registry
from uncertainty_lab.cascade import Event, History, check_memory
from uncertainty_lab.hawkes import HawkesError, HawkesModel
from uncertainty_lab.llm import LLMCapabilityError
from uncertainty_lab.llm.cache import CompletionCache
from uncertainty_lab.parameters import parameters
from uncertainty_lab.search.episode import SearchStep
from uncertainty_lab.semantic import MetricResult, SampleSet, cluster

from ul_plugin_template.backends import EchoLLM
from ul_plugin_template.gates import MaxStepsOrRepeatGate
from ul_plugin_template.graders import FirstWordsGrader
from ul_plugin_template.judges import CaseInsensitiveJudge
from ul_plugin_template.kernels import TriangularKernel
from ul_plugin_template.metrics import AnswerLengthSpread
from ul_plugin_template.selectors import LatestPerNodeSelector


@pytest.mark.parametrize("cls", [TriangularKernel, LatestPerNodeSelector, AnswerLengthSpread, MaxStepsOrRepeatGate,
                                 EchoLLM, CaseInsensitiveJudge, FirstWordsGrader])
def test_follows_its_kinds_protocol_and_declares_its_parameters(cls):
    kind = {TriangularKernel: "kernels", LatestPerNodeSelector: "memory_selectors", AnswerLengthSpread: "metrics",
            MaxStepsOrRepeatGate: "stopping_gates", EchoLLM: "llm_backends", CaseInsensitiveJudge: "equivalence_judges",
            FirstWordsGrader: "graders"}[cls]
    assert all(callable(getattr(cls, m, None)) for m in registry.PROTOCOLS[kind])
    assert cls.name and cls.summary
    params = parameters(cls)
    assert params and all(p.help for p in params)  # every parameter explains itself in the picker


# --- kernels: triangular ------------------------------------------------------------------------------

def test_triangular_kernel_value_integral_and_l1_by_hand():
    k = TriangularKernel(width=2.0)
    np.testing.assert_allclose(k.value([-1.0, 0.0, 0.5, 1.0, 2.0, 3.0]), [0, 1, 0.75, 0.5, 0, 0])
    # ∫_0^u (1 − s/2) ds = u − u²/4 up to u = 2, then 1
    np.testing.assert_allclose(k.integral([-1.0, 0.0, 1.0, 2.0, 5.0]), [0, 0, 0.75, 1.0, 1.0])
    assert k.l1_norm() == 1.0 and k.l1_norm(0.5) == 0.5
    alpha = np.array([[0.5, 0.2], [0.0, 1.0]])
    np.testing.assert_allclose(k.l1_norm(alpha), alpha)  # G = α w / 2
    np.testing.assert_allclose(k.value(1.0, alpha), 0.5 * alpha)  # broadcasts like the built-ins
    u = np.linspace(0, 3, 30001)
    assert k.integral(3.0) == pytest.approx(trapezoid(k.value(u), u), abs=1e-6)


def test_triangular_kernel_samples_its_normalised_density_and_rejects_bad_width():
    k = TriangularKernel(width=3.0)
    d = k.sample_delays(np.random.default_rng(0), 200_000)
    assert d.min() >= 0 and d.max() <= 3.0
    assert d.mean() == pytest.approx(1.0, rel=0.01)  # the mean of (2/w)(1 − u/w) on [0, w] is w/3
    for bad in (0.0, -1.0, math.inf, True):
        with pytest.raises(HawkesError, match="width"):
            TriangularKernel(width=bad)


def test_triangular_kernel_drives_a_hawkes_model_like_a_built_in():
    model = HawkesModel([0.2, 0.1], [[0.5, 0.4], [0.0, 0.3]], TriangularKernel(width=2.0))
    np.testing.assert_allclose(model.branching_matrix(), [[0.5, 0.4], [0.0, 0.3]])
    # λ(1.5) with one event of node 0 at t = 1: μ + α[0, :] s(0.5) = [0.2 + 0.5·0.75, 0.1 + 0.4·0.75]
    np.testing.assert_allclose(model.intensity(1.5, ([1.0], [0])), [0.575, 0.4])
    stream = model.simulate(T=200.0, seed=1)
    assert len(stream) > 0


# --- memory_selectors: latest_per_node --------------------------------------------------------------

def _history():
    # node 0 speaks at 0 (the seed) and 2; node 1 at 1; node 2 at 3
    return History(3, [Event(0.0, 0, "seed"), Event(1.0, 1, "b"), Event(2.0, 0, "a2"), Event(3.0, 2, "c")])


def test_latest_per_node_selects_one_event_per_node_most_recent_first():
    h = _history()
    items = LatestPerNodeSelector().select(h, 4.0, 0, k=3)
    assert [(i.index, i.node) for i in items] == [(3, 2), (2, 0), (1, 1)]
    assert [i.weight for i in items] == pytest.approx([1 / 3] * 3)
    assert check_memory(items, h, 4.0) == items  # what the cascade loop checks
    assert [i.index for i in LatestPerNodeSelector().select(h, 4.0, 0, k=2)] == [3, 2]
    assert [i.index for i in LatestPerNodeSelector(include_target=False).select(h, 4.0, 0, k=3)] == [3, 1]
    tied = History(3, [Event(0.0, 0, "seed"), Event(1.0, 1, "b"), Event(2.0, 2, "c")])
    assert [i.index for i in LatestPerNodeSelector().select(tied, 2.0, 0, k=3)] == [1, 0]  # only events before t


def test_latest_per_node_age_decay_weights_by_hand():
    items = LatestPerNodeSelector(age_decay=1.0).select(_history(), 4.0, 0, k=3)
    raw = np.exp(-np.array([1.0, 2.0, 3.0]))  # ages of the events at 3, 2, 1
    assert [i.weight for i in items] == pytest.approx(raw / raw.sum())
    assert LatestPerNodeSelector().select(History(2, []), 1.0, 0, k=2) == []
    with pytest.raises(ValueError, match="k"):
        LatestPerNodeSelector().select(_history(), 4.0, 0, k=0)


# --- metrics: answer_length_spread ------------------------------------------------------------------

def test_answer_length_spread_by_hand():
    m = AnswerLengthSpread()
    r = m.score(["one", "one two three"])  # lengths 1 and 3: mean 2, std 1, cv 0.5
    assert isinstance(r, MetricResult) and r.metric == "answer_length_spread"
    assert (r.uncertainty, r.normalised_uncertainty, r.confidence) == pytest.approx((0.5, 0.5, 0.5))
    assert r.details["lengths"] == [1.0, 3.0]
    assert m.score(["Paris", "Rome", "Oslo"]).confidence == 1.0  # same length, different meaning: the toy's flaw
    assert AnswerLengthSpread(cv_max=0.25).score(["one", "one two three"]).confidence == 0.0
    chars = AnswerLengthSpread(unit="characters").score(SampleSet.from_texts(["ab", "abcdef"]))
    assert chars.uncertainty == pytest.approx(0.5)  # 2 and 6 characters: mean 4, std 2


def test_answer_length_spread_is_missing_not_confident_with_one_sample():
    r = AnswerLengthSpread().score(["only one"])
    assert r.missing and "at least 2" in r.details["missing"]


# --- stopping_gates: max_steps_or_repeat ------------------------------------------------------------

def test_max_steps_or_repeat_stops_on_a_repeat_then_resets():
    gate = MaxStepsOrRepeatGate(max_steps=10, repeats=2)
    assert not gate.update(SearchStep("capital of France", ("d1",))).stop
    assert not gate.update(SearchStep("Paris", (), action="answer")).stop  # answers are not queries
    d = gate.update(SearchStep("  Capital of   FRANCE ", ("d1",)))
    assert d.stop and "issued 2 times" in d.reason and gate.stop_kind == "exhausted"
    assert d.signals["times_issued"] == 2 and d.signals["steps"] == 3
    gate.reset()
    assert not gate.update(SearchStep("capital of France", ("d1",))).stop


def test_max_steps_or_repeat_stops_on_the_budget():
    gate = MaxStepsOrRepeatGate(max_steps=3)
    decisions = [gate.update(SearchStep(q, ())) for q in ("a", "b", "c")]
    assert [d.stop for d in decisions] == [False, False, True]
    assert gate.stop_kind == "budget" and decisions[-1].reason.startswith("budget")
    assert not MaxStepsOrRepeatGate().update(SearchStep("doc1", (), action="read")).stop


# --- llm_backends: echo -----------------------------------------------------------------------------

def test_echo_backend_is_deterministic_and_cached(tmp_path):
    llm = EchoLLM(transform="upper", cache=CompletionCache(tmp_path / "c.sqlite"))
    first = llm.complete("what is the capital of France?", n=2, seed=0)
    assert [c.text for c in first] == ["WHAT IS THE CAPITAL OF FRANCE?"] * 2
    assert first[0].backend == "echo" and first[0].model == "echo-upper-v1" and not first[0].cached
    again = llm.complete("what is the capital of France?", n=2, seed=0)
    assert [c.text for c in again] == [c.text for c in first] and all(c.cached for c in again)


def test_echo_backend_transforms_limits_and_variants():
    llm = EchoLLM(transform="reverse_words")
    msgs = [{"role": "system", "content": "ignored"}, {"role": "user", "content": "one two three"}]
    assert llm.complete(msgs, use_cache=False)[0].text == "three two one"
    cut = EchoLLM().complete("a b c d e", max_tokens=2, use_cache=False)[0]
    assert (cut.text, cut.finish_reason) == ("a b", "length")
    assert EchoLLM().complete("yes. no", stop=["."], use_cache=False)[0].text == "yes"
    texts = [c.text for c in EchoLLM(variants=3).complete("hi", n=12, seed=7, use_cache=False)]
    assert set(texts) <= {"hi", "hi (variant 1)", "hi (variant 2)"} and len(set(texts)) > 1
    assert texts == [c.text for c in EchoLLM(variants=3).complete("hi", n=12, seed=7, use_cache=False)]
    with pytest.raises(LLMCapabilityError):
        EchoLLM().complete("hi", logprobs=True)


# --- equivalence_judges: case_insensitive -----------------------------------------------------------

def test_case_insensitive_judge_by_hand():
    j = CaseInsensitiveJudge()
    assert j.equivalent("q", "Paris", "  paris ")
    assert j.equivalent("q", "New  York", "new york")
    assert not CaseInsensitiveJudge(collapse_whitespace=False).equivalent("q", "New  York", "new york")
    assert not j.equivalent("q", "Paris.", "Paris")
    assert CaseInsensitiveJudge(ignore_punctuation=True).equivalent("q", "Paris.", "paris")
    assert not j.equivalent("q", "Paris", "Rome")


def test_case_insensitive_judge_clusters_and_feeds_a_built_in_metric():
    texts = ["Paris", "PARIS", "paris", "Rome", "rome"]
    assert cluster(texts, CaseInsensitiveJudge()).sizes == [3, 2]
    from uncertainty_lab.semantic import DiscreteSemanticEntropy

    r = DiscreteSemanticEntropy(judge=CaseInsensitiveJudge()).score(texts)
    p = np.array([0.6, 0.4])
    assert r.uncertainty == pytest.approx(float(-(p * np.log(p)).sum()))


# --- graders: first_words -----------------------------------------------------------------------------

def test_first_words_grader_by_hand():
    g = FirstWordsGrader()
    assert g.grade("Canberra, of course.", ["Canberra"]).label == "correct"
    assert g.grade("Sydney is the capital", ["Canberra"], ["Sydney"]).label == "wrong"
    unsure = g.grade("It is Canberra", ["Canberra"])  # the reference is not among the first words' start
    assert unsure.label == "uncertain" and unsure.correct is None
    assert FirstWordsGrader(unsure_is_wrong=True).grade("It is Canberra", ["Canberra"]).label == "wrong"
    assert g.grade("...", ["Canberra"]).label == "wrong"  # the base class: an empty answer is wrong


def test_first_words_grader_in_the_audit_by_instance():
    from uncertainty_lab.datasets.audit import load_grader_audit
    from uncertainty_lab.semantic.grading_audit import audit_graders

    (row,) = audit_graders({"first_words": FirstWordsGrader()}, load_grader_audit(limit=10))
    assert row.n == 10 and row.uncertain == row.row()["uncertain"]
