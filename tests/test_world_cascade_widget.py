"""Notebook 02's known-truth panel (uncertainty_lab/widgets/world_cascade.py): the scaled world keeps the stationary
rates, the panel reports memory precision 0 without excitation (and an empty Hawkes memory: the L1 fit finds α̂ = 0), and the explorer shows an error instead of raising."""

from __future__ import annotations

import numpy as np
import pytest
from test_world_cascade import WordEmbedder

from uncertainty_lab.widgets.world_cascade import WorldExplorer, draw_world_panel, scaled_world, world_panel
from uncertainty_lab.worlds import load_world


@pytest.mark.parametrize("strength", [0.0, 0.5, 1.05])
def test_scaled_world_keeps_the_rates_and_scales_rho(tmp_path, strength):
    spec = scaled_world(strength, horizon_h=50.0)
    path = tmp_path / "w.toml"
    from uncertainty_lab.widgets.world_cascade import _toml

    path.write_text(_toml(spec))
    w, base = load_world(str(path)), load_world("excitation")
    np.testing.assert_allclose(w.stationary_rates, base.stationary_rates, rtol=1e-9)
    assert w.spectral_radius == pytest.approx(0.7 * strength)
    with pytest.raises(ValueError, match="strength"):
        scaled_world(2.0)


def test_panel_without_excitation_has_no_true_ancestors(tmp_path):
    with pytest.warns(UserWarning, match="β is undetermined"):  # the L1 fit finds α̂ = 0, the truth
        panel = world_panel(0.0, runs=2, steps=4, embedder=WordEmbedder(), out_dir=tmp_path)
    assert not panel.result.setup.fit.alpha.any()
    rows = panel.result.run_rows()
    assert {r["memory_precision"] for r in rows if r["selector"] in ("recency", "random")} == {0.0}
    assert all(r["memory_empty"] == 1 for r in rows if r["selector"].startswith("hawkes"))  # nothing excites
    assert "empty memory" in str(panel.table)
    assert panel.recovery["rho"] == 0.0 and "memory precision" in panel._repr_html_()
    fig = draw_world_panel(panel)
    assert len(fig.axes) == 2
    ticks = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert ticks[:2] == ["hawkes", "hawkes_score"] and sum("empty" in t.get_text() for t in fig.axes[0].texts) == 2


def test_explorer_shows_errors(monkeypatch):
    import uncertainty_lab.widgets.world_cascade as wc

    def broken(*a, **k):
        raise ValueError("no such thing")

    monkeypatch.setattr(wc, "world_panel", broken)
    ex = WorldExplorer(runs=2, steps=4, embedder=WordEmbedder())
    assert ex.run() is None and "no such thing" in ex.status.value
