"""Diagnostics: time-rescaling residuals, the per-node KS test with Holm correction, and the plots."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from uncertainty_lab.hawkes import (  # noqa: E402
    EventStream,
    HawkesError,
    HawkesModel,
    fit_hawkes,
    ks_test,
    plot_branching_matrix,
    plot_intensity,
    plot_qq,
    simulate,
    time_rescaling_residuals,
)

TRUTH = HawkesModel.exponential([0.3, 0.2, 0.25], [[0.8, 0.6, 0.0], [0.2, 0.6, 0.6], [0.6, 0.0, 0.6]], beta=2.0)


@pytest.fixture(scope="module")
def stream():
    return simulate(TRUTH, T=2500.0, seed=8, method="branching")


def test_residuals_are_compensator_increments(stream):
    res = time_rescaling_residuals(TRUTH, stream)
    assert [r.size for r in res] == stream.counts.tolist()
    comp = TRUTH.compensator(stream.times, stream)
    for i in range(3):
        assert res[i].sum() == pytest.approx(comp[stream.nodes == i, i][-1], rel=1e-12)
        assert np.all(res[i] > 0)
    poisson = HawkesModel.exponential([0.5, 0.5, 0.5], np.zeros((3, 3)), beta=1.0)
    res0 = time_rescaling_residuals(poisson, stream)[0]
    assert res0 == pytest.approx(0.5 * np.diff(np.concatenate([[0.0], stream.times_of(0)])))


def test_ks_accepts_the_true_model_and_rejects_a_poisson_one_on_the_same_data(stream):
    assert stream.n_events > 5000
    good = ks_test(TRUTH, stream)
    # under the true model each node's residuals are i.i.d. Exp(1): Holm at 0.05 rejects a correct model
    # at most 5 % of the time (the seed is fixed)
    assert good.passed and not good.reject.any()
    assert np.all(good.pvalue_adjusted >= good.pvalue)
    # the best Poisson model (μ = empirical rates, no excitation) is rejected at every node, overwhelmingly
    poisson = HawkesModel.exponential(stream.rates, np.zeros((3, 3)), beta=2.0)
    bad = ks_test(poisson, stream)
    assert not bad.passed and bad.reject.all() and np.all(bad.pvalue_adjusted < 1e-10)
    assert "REJECTED" in repr(bad) and "holm" in repr(bad)
    assert "p_bonferroni" in ks_test(TRUTH, stream, method="bonferroni").table.columns
    # and a fitted model passes too
    assert ks_test(fit_hawkes(stream, beta_grid=[1, 2, 4]).model, stream).passed


def test_a_silent_node_is_not_tested():
    s = EventStream([0.5, 1.5, 2.0], [0, 0, 0], 2, 3.0)
    m = HawkesModel.exponential([1.0, 0.1], np.zeros((2, 2)), beta=1.0)
    result = ks_test(m, s)
    assert np.isnan(result.pvalue[1]) and not result.reject[1] and result.n.tolist() == [3, 0]


def test_plots_return_figure_and_axes(stream):
    fig, ax = plot_qq(TRUTH, stream)
    assert ax.get_xlabel() == "Exp(1) quantile" and len(ax.lines) == 4
    plt.close(fig)
    fig, ax = plot_intensity(TRUTH, stream, t_range=(0.0, 50.0), nodes=[0, 2])
    # the range, padded by 1% on each side so an event tick at either end shows whole
    assert ax.get_xlim() == pytest.approx((-0.5, 50.5)) and ax.get_ylabel().startswith("intensity")
    plt.close(fig)
    fig, ax = plot_branching_matrix(TRUTH, node_names=["a", "b", "c"])
    assert f"{TRUTH.spectral_radius():.3f}" in ax.get_title()
    assert ax.get_ylabel() == "source j" and ax.get_xlabel() == "target i"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b", "c"]
    assert ax.texts[1].get_text() == f"{TRUTH.G[0, 1]:.2f}"  # row = source, column = target
    plt.close(fig)
    fig, axes = plt.subplots(1, 2)
    assert plot_branching_matrix(np.array([[1.2]]), ax=axes[0])[1] is axes[0]
    assert "UNSTABLE" in axes[0].get_title()
    plt.close(fig)


def test_a_node_with_too_few_events_is_flagged_and_never_rejects_the_model():
    """A node whose only event is at time 0 has one residual ξ = Λ(0) − Λ(0) = 0, so KS = 1 and p ≈ 0: a verdict
    on where the data starts, not on the model. It is listed as not tested, with the reason."""
    one = simulate(HawkesModel.exponential([0.3], [[0.8]], beta=2.0), T=2000.0, seed=4)
    times = np.concatenate([[0.0], one.times[one.times > 0][:400]])
    nodes = np.concatenate([[1], np.zeros(400, dtype=int)])
    s = EventStream.from_arrays(times, nodes, n_nodes=2, end_time=float(times[-1]))
    m = HawkesModel.exponential([0.3, 0.01], [[0.8, 0.0], [0.0, 0.0]], beta=2.0)  # node 1 does not excite node 0
    assert time_rescaling_residuals(m, s)[1].tolist() == [0.0]
    result = ks_test(m, s)
    assert result.n.tolist() == [400, 1] and result.tested.tolist() == [True, False]
    assert np.isnan(result.statistic[1]) and np.isnan(result.pvalue[1]) and not result.reject[1]
    assert result.passed and result.pvalue[0] > 0.05
    assert result.table.column("note").tolist() == ["", "too few events (1 < 5): not tested"]
    assert repr(result).startswith("KSResult: model not rejected (1 node(s) with fewer than 5 events not tested)")
    # tested anyway (min_events=1), the lone event at 0 rejects the model on its own
    forced = ks_test(m, s, min_events=1)
    assert forced.statistic[1] == 1.0 and forced.reject[1] and not forced.passed and "REJECTED" in repr(forced)
    with pytest.raises(HawkesError, match="min_events must be a positive integer"):
        ks_test(m, s, min_events=0)
    nothing = ks_test(m, EventStream.from_arrays([0.0, 1.0], [0, 1], n_nodes=2, end_time=2.0))
    assert nothing.passed and repr(nothing).startswith("KSResult: not tested (no node has 5 events or more)")
