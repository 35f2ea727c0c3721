"""Notebook 05's episode stepper: the step summary and its HTML over the whole slider range, the gate trace
(live and recomputed), the belief table, and the widget wiring."""

from __future__ import annotations

import html
import math

import matplotlib
import pytest

from uncertainty_lab.search import Episode, SearchStep, exhaustion_signals, run_episode
from uncertainty_lab.search.oracle import OracleReader
from uncertainty_lab.widgets.search import (
    EpisodeStepper,
    belief_table,
    draw_gate_trace,
    episode_stepper,
    gate_trace_table,
    render_step,
    step_summary,
)

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def predicate_episode(env, questions):
    """q003 (4 hops): the heuristic loops on 'question + entity' queries until the exhaustion gate fires."""
    return run_episode(questions["q003"], env, llm=OracleReader(), policy="heuristic", belief="predicate",
                       gates=["exhaustion", "fixed_budget"], max_steps=8)


@pytest.fixture(scope="module")
def implicit_episode(env, questions):
    return run_episode(questions["q001"], env, llm=OracleReader(), policy="heuristic", belief="implicit",
                       gates=["fixed_budget"], max_steps=5)


def test_step_summary_over_the_slider_range(predicate_episode, env):
    ep = predicate_episode
    stepper = episode_stepper(ep, documents=env)
    assert (stepper.slider.min, stepper.slider.max) == (1, len(ep.steps))
    seen: set[str] = set()
    for t in range(stepper.slider.min, stepper.slider.max + 1):
        s = stepper.show(t)
        step = ep.steps[t - 1]
        assert stepper.slider.value == t and stepper.summary is s
        assert (s.t, s.query, s.action, s.passage_ids) == (t, step.query, step.action, step.passage_ids)
        assert s.titles == tuple(env.document(i).title for i in step.passage_ids)
        assert s.new_ids == tuple(i for i in step.passage_ids if i not in seen)
        seen.update(step.passage_ids)
        sig = step.gates["exhaustion"]["signals"]
        assert s.signals_live and s.jaccard == pytest.approx(sig["jaccard"]) and s.upr == pytest.approx(sig["upr"])
        assert s.streak == sig["streak"] and s.qualifies == sig["qualifies"] and (s.tau_j, s.tau_u) == (0.6, 0.3)
        assert s.belief_kind == "predicate"
        assert s.open_questions == tuple(step.open_questions)
        assert len(s.findings) == len(step.belief["findings"])
        panel = stepper.panel.value
        assert panel == render_step(s)
        assert html.escape(step.query) in panel
        for i in step.passage_ids:
            assert f"<code>{i}</code>" in panel
        assert f"J = <b>{sig['jaccard']:.2f}</b>" in panel and f"UPR = <b>{sig['upr']:.2f}</b>" in panel
        assert ("stopped:" in panel) == (t == len(ep.steps))
    assert ep.stop_reason == "exhausted" and s.stop_here == "exhausted (exhaustion)"


def test_slider_moves_the_panel(predicate_episode):
    stepper = EpisodeStepper(predicate_episode)
    assert stepper.summary.t == 1
    stepper.slider.value = 2  # what dragging the slider does
    assert stepper.summary.t == 2 and html.escape(predicate_episode.steps[1].query) in stepper.panel.value
    with pytest.raises(ValueError, match="1.."):
        step_summary(predicate_episode, 0)
    with pytest.raises(ValueError, match="no steps"):
        EpisodeStepper(Episode({"question": {"question": "x"}}))


def test_recomputed_signals_for_an_episode_without_the_gate(implicit_episode):
    ep = implicit_episode
    expected = exhaustion_signals([s.query for s in ep.steps], [list(s.passage_ids) for s in ep.steps])
    for t in range(1, len(ep.steps) + 1):
        s = step_summary(ep, t)
        assert not s.signals_live and s.belief_kind == "implicit"
        assert s.jaccard == pytest.approx(expected[t - 1]["jaccard"]) and s.upr == pytest.approx(expected[t - 1]["upr"])
        assert "recomputed" in render_step(s) and s.belief_text.startswith("Question: ")
    table = gate_trace_table(ep)
    assert "recomputed" in table.title and len(table) == len(ep.steps)
    assert [r["J"] for r in table] == pytest.approx([e["jaccard"] for e in expected])


def test_gate_trace_and_belief_tables(predicate_episode):
    ep = predicate_episode
    table = gate_trace_table(ep)
    fired = [r["t"] for r in table if r["stop"]]
    assert fired == [len(ep.steps)]
    assert all(r["qualifies"] for r in table[-2:]) and table[-1]["streak"] == 2
    first_ids = table[0]["ids (* new)"].split()
    assert all(i.endswith("*") for i in first_ids)
    fig = draw_gate_trace(ep)
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert any("gate fires (t = " in x for x in labels) and any("τ_J = 0.6" in x for x in labels)
    bt = belief_table(ep)
    assert len(bt) == len(ep.steps) and bt[-1]["findings"] >= 1 and bt[0]["kind"] == "predicate"
    assert math.isnan(bt[0]["history entries"])


def test_answer_steps_are_not_rounds():
    ep = Episode({"question": {"question": "q?"}}, steps=[
        SearchStep("a b c", ("d1",), t=1, belief={"kind": "implicit", "text": "Question: q?"}),
        SearchStep("Drasir", (), action="answer", t=2, belief={"kind": "implicit", "text": "Question: q?"}),
    ])
    s = step_summary(ep, 2)
    assert s.jaccard is None and s.upr is None and "not a search round" in render_step(s)


def test_the_panel_shows_the_gate_s_own_thresholds(env, questions):
    ep = run_episode(questions["q001"], env, llm=OracleReader(), policy="heuristic", belief="implicit",
                     gates=[("exhaustion", {"tau_j": 0.5, "tau_u": 0.2})], max_steps=3)
    s = step_summary(ep, 2)
    assert (s.tau_j, s.tau_u) == (0.5, 0.2) and "(τ_J 0.5)" in render_step(s) and "(τ_U 0.2)" in render_step(s)
