"""Notebook 05's known-truth panel: the gate's response on a changed world (against chain_theory), its HTML and
figure, and the widget wiring."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from uncertainty_lab.widgets.search_world import (  # noqa: E402
    GateWorldExplorer,
    draw_response,
    gate_response,
    gate_world_explorer,
    response_html,
    world_with,
)
from uncertainty_lab.worlds.search import chain_theory  # noqa: E402


def test_a_clean_world_without_stalls_loses_nothing_to_the_gate_and_theory_agrees():
    resp = gate_response(world_with("search_premature", stall=0.0), n_questions=8)
    gated, plain = resp["arms"]["exhaustion+fixed_budget"], resp["arms"]["fixed_budget"]
    assert gated["accuracy"] == plain["accuracy"] == 1.0 == resp["theory"][True] == resp["theory"][False]
    assert gated["context_tokens"] < plain["context_tokens"] and gated["stops"]["exhausted"] == 8
    # a clean world re-checks twice after completing a k-hop chain: k + 2 steps
    ks = [3, 4] * 4
    assert gated["steps"] == pytest.approx(sum(k + 2 for k in ks) / 8)
    assert resp["theory"][True] == pytest.approx(sum(chain_theory(k, 0.0, max_steps=12)["accuracy"] for k in ks) / 8)


def test_a_world_that_is_not_clean_has_no_theory_and_the_html_says_what_ran():
    resp = gate_response(world_with("search_premature", format_reliability=0.8), n_questions=4)
    assert resp["theory"] is None and resp["rates"]["format_reliability"] == 0.8
    text = response_html(resp)
    assert "world:search_premature" in text and "format_reliability = 0.8" in text and "theory" not in text
    fig = draw_response(resp)
    assert [ax.get_ylabel() for ax in fig.axes] == ["accuracy", "context tokens / episode"]


def test_slider_values_are_checked():
    with pytest.raises(ValueError, match="stall must be a number in"):
        world_with("search_premature", stall=0.95)
    with pytest.raises(ValueError, match="unknown slider"):
        gate_world_explorer(n_questions=2, skill=0.5)


def test_the_panel_redraws_when_a_slider_or_the_world_changes():
    panel = gate_world_explorer("search_premature", n_questions=4)
    assert isinstance(panel, GateWorldExplorer) and panel.image.value and "exhaustion+fixed_budget" in panel.status.value
    panel.sliders["stall"].value = 0.0
    assert panel.response["rates"]["stall"] == 0.0
    assert panel.response["arms"]["exhaustion+fixed_budget"]["accuracy"] == 1.0
    panel.world.value = "search_efficient"
    assert panel.response["world"] == "search_efficient" and panel.sliders["format_reliability"].value == 0.95
