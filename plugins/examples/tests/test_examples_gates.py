"""novelty_decay against a hand-computed sequence of rounds."""

from __future__ import annotations

import pytest
from uncertainty_lab.search.episode import SearchStep

from ul_examples.gates import NoveltyDecayGate


def test_novelty_decay_by_hand():
    # UPR: [a,b] 1; [a,c] 0.5; [a,b] 0; [c] 0.  Smoothed with γ = 0.5: 1, 0.75, 0.375, 0.1875 < 0.2 -> stop
    gate = NoveltyDecayGate(smoothing=0.5, threshold=0.2, min_rounds=2)
    rounds = [("a", "b"), ("a", "c"), ("a", "b"), ("c",)]
    decisions = [gate.update(SearchStep(f"q{i}", ids)) for i, ids in enumerate(rounds)]
    assert [d.signals["upr"] for d in decisions] == pytest.approx([1.0, 0.5, 0.0, 0.0])
    assert [d.signals["smoothed_upr"] for d in decisions] == pytest.approx([1.0, 0.75, 0.375, 0.1875])
    assert [d.stop for d in decisions] == [False, False, False, True]
    assert "0.188 < 0.2" in decisions[-1].reason and gate.stop_kind == "exhausted"


def test_answers_are_not_rounds_and_min_rounds_holds_and_reset_forgets():
    gate = NoveltyDecayGate(smoothing=1.0, threshold=0.5, min_rounds=2)
    assert not gate.update(SearchStep("x", ())).stop  # UPR 0 but only one round so far
    d = gate.update(SearchStep("Paris", (), action="answer"))
    assert not d.stop and d.signals["round"] is False and d.signals["rounds"] == 1
    assert gate.update(SearchStep("doc1", (), action="read")).stop  # second round, rate 0 < 0.5
    gate.reset()
    assert not gate.update(SearchStep("x", ("d1",))).stop


def test_restore_replays_the_recorded_steps():
    steps = [SearchStep("q", ("a",)), SearchStep("q", ("a",))]
    gate = NoveltyDecayGate(smoothing=0.5)
    gate.restore(steps)  # the base class's resume: reset, then update each recorded step
    assert gate.update(SearchStep("q", ("a",))).signals["smoothed_upr"] == pytest.approx(0.25)  # 1, ½, ¼
