"""Stopping gates on hand-made step sequences; J_t and UPR_t computed by hand."""

from __future__ import annotations

import math

import pytest
from fakes import ScriptedLLM

from uncertainty_lab import registry
from uncertainty_lab.parameters import ParameterError, parameters
from uncertainty_lab.search import (
    AnswerConvergenceGate,
    ExhaustionGate,
    SearchStep,
    exhaustion_signals,
    make_gates,
)


def run(gate, steps):
    return [gate.update(s) for s in steps]


# the worked example:                                  J_t (max over the window)            UPR_t
HAND = [
    SearchStep("havelt brotherhood founder", ["a", "b", "c"]),        # no earlier action: 0      3/3 = 1
    SearchStep("havelt brotherhood founder born", ["a", "b", "d"]),   # 3/4 = 0.75               1/3 = 0.333
    SearchStep("havelt brotherhood founder", ["a", "b", "c"]),        # 3/3 = 1.0 (vs step 1)    0/3 = 0
    SearchStep("founder of havelt brotherhood", ["b", "a"]),          # 3/4 = 0.75 (vs 1 and 3)  0/2 = 0
]


def test_exhaustion_fires_exactly_at_the_pth_consecutive_qualifying_round():
    gate = registry.create("stopping_gates", "exhaustion")  # τ_J 0.6, τ_U 0.3, p 2, W 5
    decisions = run(gate, HAND)
    sig = [d.signals for d in decisions]
    assert [s["jaccard"] for s in sig] == pytest.approx([0.0, 0.75, 1.0, 0.75])
    assert [s["upr"] for s in sig] == pytest.approx([1.0, 1 / 3, 0.0, 0.0])
    assert [s["qualifies"] for s in sig] == [False, False, True, True]  # round 2: UPR 0.333 > 0.3
    assert [s["streak"] for s in sig] == [0, 0, 1, 2]
    assert [d.stop for d in decisions] == [False, False, False, True]
    assert decisions[3].reason.startswith("exhausted: 2 consecutive rounds")
    assert "UPR = 0.33 > 0.3" in decisions[1].reason


def test_exhaustion_needs_p_rounds_and_both_thresholds():
    assert [d.stop for d in run(ExhaustionGate(p=3), HAND)] == [False] * 4
    five = [*HAND, SearchStep("havelt brotherhood founder", ["c"])]  # J 1.0, UPR 0: the third qualifying round
    assert [d.stop for d in run(ExhaustionGate(p=3), five)] == [False, False, False, False, True]
    assert [d.stop for d in run(ExhaustionGate(tau_j=0.8), HAND)] == [False] * 4  # round 4: J 0.75 < 0.8
    assert [d.stop for d in run(ExhaustionGate(tau_u=0.0), HAND)][-1] is True
    # a rephrased query that still brings a new passage breaks the streak
    fresh = [*HAND[:3], SearchStep("founder of havelt brotherhood", ["b", "z"])]  # UPR 1/2 > 0.3
    assert [d.stop for d in run(ExhaustionGate(), fresh)] == [False] * 4


def test_exhaustion_window():
    alternating = [SearchStep("alpha beta", ["a"]), SearchStep("gamma delta", ["b"]),
                   SearchStep("alpha beta", ["a"]), SearchStep("gamma delta", ["b"])]
    wide = run(ExhaustionGate(window=5), alternating)
    assert [d.signals["jaccard"] for d in wide] == [0.0, 0.0, 1.0, 1.0] and wide[-1].stop
    narrow = run(ExhaustionGate(window=1), alternating)  # each round sees only the previous one
    assert [d.signals["jaccard"] for d in narrow] == [0.0, 0.0, 0.0, 0.0] and not any(d.stop for d in narrow)


def test_exhaustion_edge_cases_and_reset():
    gate = ExhaustionGate()
    empty = run(gate, [SearchStep("x y", []), SearchStep("x y", [])])
    assert [d.signals["upr"] for d in empty] == [0.0, 0.0]  # max(1, 0): an empty retrieval is "no novelty"
    assert [d.stop for d in empty] == [False, False]  # round 1 has no earlier action (J = 0)
    gate.reset()
    assert [d.stop for d in run(gate, HAND)] == [False, False, False, True]  # same as a fresh gate
    # an answer action is not a round: the streak neither grows nor breaks
    gate.reset()
    mixed = [*HAND[:3], SearchStep("Drasir", action="answer"), HAND[3]]
    decisions = run(gate, mixed)
    assert decisions[3].signals == {"round": False, "streak": 1, "p": 2} and decisions[4].stop
    # reads compare as "read <id>": re-reading one document is a repeat with nothing new
    reads = [SearchStep("doc-1", ["doc-1"], action="read")] * 3
    assert [d.stop for d in run(ExhaustionGate(), reads)] == [False, False, True]
    rows = exhaustion_signals(["a b", "a b"], [["x"], ["x"]])
    assert rows[1]["jaccard"] == 1.0 and rows[1]["upr"] == 0.0


def test_exhaustion_parameters_are_declared():
    params = {p.name: p for p in parameters(ExhaustionGate)}
    assert {n: params[n].default for n in ("tau_j", "tau_u", "p", "window")} == {"tau_j": 0.6, "tau_u": 0.3, "p": 2,
                                                                                  "window": 5}
    assert params["tau_j"].max == 1.0 and params["p"].min == 1 and params["window"].help
    with pytest.raises(ParameterError, match="tau_j"):
        registry.create("stopping_gates", "exhaustion", tau_j=1.5)


def test_fixed_budget_and_self_stop():
    gate = registry.create("stopping_gates", "fixed_budget", max_steps=3)
    assert [d.stop for d in run(gate, HAND)] == [False, False, True, True]
    gate.reset()
    assert gate.update(HAND[0]).signals == {"steps": 1, "max_steps": 3}
    self_stop = registry.create("stopping_gates", "llm_self_stop")
    assert not self_stop.update(HAND[0]).stop
    d = self_stop.update(SearchStep("Drasir", action="answer"))
    assert d.stop and "Drasir" in d.reason and d.signals == {"action": "answer"}


def _predicate(*statuses, findings=1):
    return {"kind": "predicate", "text": "", "findings": [{"text": "f", "doc_ids": ["a"]}] * findings,
            "predicates": [{"text": f"q{i}", "status": s} for i, s in enumerate(statuses)]}


def test_belief_complete():
    gate = registry.create("stopping_gates", "belief_complete")
    d = gate.update(SearchStep("q", belief=_predicate("satisfied", "open")))
    assert not d.stop and d.signals["open"] == 1 and "1 open question" in d.reason
    d = gate.update(SearchStep("q", belief=_predicate("satisfied", "refuted")))
    assert d.stop and d.signals == {"judged": True, "open": 0, "satisfied": 1, "refuted": 1, "findings": 1}
    d = gate.update(SearchStep("q", belief=_predicate("satisfied", findings=0)))
    assert not d.stop and "empty belief" in d.reason
    d = gate.update(SearchStep("q", belief={"kind": "implicit", "text": "..."}))
    assert not d.stop and d.reason.startswith("cannot judge") and d.signals["judged"] is False


def test_answer_convergence_with_fixed_answers():
    state = {"kind": "implicit", "text": "Question: where?\nHistory: ..."}
    step = SearchStep("q", ["a"], t=2, question="Where was he born?", belief=state)
    agree = AnswerConvergenceGate(m=5, threshold=0.3, llm=ScriptedLLM(reply="Drasir."))
    d = agree.update(step)
    assert d.stop and d.signals["uncertainty"] == 0.0 and d.signals["n_clusters"] == 1 and d.signals["judge"] == "exact"
    assert d.signals["metric"] == "discrete_semantic_entropy"
    four_one = ["Drasir", "The Drasir", "drasir!", "Answer: Drasir", "Tismar"]
    llm = ScriptedLLM(reply=lambda messages, i, seed: four_one[i])
    h = -(0.8 * math.log(0.8) + 0.2 * math.log(0.2))  # 0.5004 nats; / ln 5 = 0.3109
    d = AnswerConvergenceGate(m=5, threshold=0.3, llm=llm).update(step)
    assert not d.stop and d.signals["uncertainty"] == pytest.approx(h)
    assert d.signals["normalised_uncertainty"] == pytest.approx(h / math.log(5))
    assert d.signals["answers"] == ["Drasir", "The Drasir", "drasir!", "Drasir", "Tismar"]
    assert AnswerConvergenceGate(m=5, threshold=0.35, llm=llm).update(step).stop
    assert llm.calls[0]["n"] == 5 and llm.calls[0]["max_tokens"] == 16 and "Where was he born?" in llm.calls[0]["messages"][-1]["content"]
    abstain = AnswerConvergenceGate(m=3, llm=ScriptedLLM(reply="I don't know")).update(step)
    assert not abstain.stop and "only 0 of 3" in abstain.reason and math.isnan(abstain.signals["uncertainty"])
    unbound = AnswerConvergenceGate()
    with pytest.raises(ValueError, match="needs a language model"):
        unbound.update(step)
    unbound.bind(ScriptedLLM(reply="x y"))
    assert unbound.update(step).stop


def test_answer_convergence_with_another_metric_by_name():
    """Any registered metric can be the agreement test: num_semantic_sets normalises (K - 1) / (n - 1), a metric
    without a judge (lexical_similarity) gets none, and an unknown name fails when the gate is made."""
    step = SearchStep("q", ["a"], t=1, question="Where was he born?", belief={"kind": "implicit", "text": "..."})
    four_one = ["Drasir", "The Drasir", "drasir!", "Answer: Drasir", "Tismar"]
    llm = ScriptedLLM(reply=lambda messages, i, seed: four_one[i])
    sets = AnswerConvergenceGate(m=5, threshold=0.3, metric="num_semantic_sets", llm=llm)
    d = sets.update(step)
    assert d.signals["metric"] == "num_semantic_sets" and d.signals["uncertainty"] == 2  # two meanings among five
    assert d.signals["normalised_uncertainty"] == pytest.approx((2 - 1) / (5 - 1)) and d.stop
    assert "normalised num_semantic_sets 0.25 ≤ 0.3" in d.reason
    assert not AnswerConvergenceGate(m=5, threshold=0.2, metric="num_semantic_sets", llm=llm).update(step).stop
    lexical = AnswerConvergenceGate(m=5, metric="lexical_similarity", judge="embedding", llm=llm)
    expected = registry.create("metrics", "lexical_similarity").score(["Drasir", "The Drasir", "drasir!", "Drasir", "Tismar"])
    assert lexical.update(step).signals["normalised_uncertainty"] == pytest.approx(expected.normalised_uncertainty)
    with pytest.raises(LookupError, match="closest match: 'num_semantic_sets'"):
        AnswerConvergenceGate(metric="num_semantic_set")


def test_every_gate_is_registered_and_make_gates():
    assert set(registry.names("stopping_gates")) >= {"exhaustion", "fixed_budget", "llm_self_stop", "belief_complete",
                                                      "answer_convergence"}
    for info in registry.describe("stopping_gates", strict=True):
        assert info.status == "ok" and info.summary
    gates = make_gates(["exhaustion", ("fixed_budget", {"max_steps": 2}), {"name": "llm_self_stop"}])
    assert [g.name for g in gates] == ["exhaustion", "fixed_budget", "llm_self_stop"] and gates[1].max_steps == 2
    with pytest.raises(ValueError, match="given twice"):
        make_gates(["exhaustion", "exhaustion"])
    with pytest.raises(LookupError, match="closest match: 'exhaustion'"):
        make_gates(["exhaustio"])
