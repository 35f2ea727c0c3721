"""Alignment and drift by hand on tiny fixed embeddings; the window widening; OLS trend against numpy; the
late-stage window; intervals over runs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from fakes import FakeEmbedder
from scipy import stats

from uncertainty_lab.cascade import (
    CascadeError,
    CascadeRun,
    CascadeStep,
    Event,
    MemoryItem,
    NodeSpec,
    aggregate,
    alignment,
    curve_band,
    evaluate_run,
    global_drift,
    interval,
    local_drift,
    summarize,
    trend,
)


def cos(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))


TABLE = {
    "seed": [1.0, 0.0, 0.0],
    "g1": [1.0, 1.0, 0.0],
    "g2": [0.0, 1.0, 0.0],
    "g3": [0.0, 0.0, 2.0],  # not unit length: cosines must normalise
    "r_a": [1.0, 0.0, 0.0],
    "r_b": [0.0, 1.0, 0.0],
    "r_far": [0.0, 0.0, 1.0],
    "r_other_node": [0.0, 1.0, 1.0],
}
EMB = FakeEmbedder(TABLE, normalise=False)


def test_alignment_by_hand_with_window_widening():
    gen = [Event(10.0, 0, "g1"), Event(30.0, 1, "g2"), Event(100.0, 0, "g3")]
    refs = [Event(0.0, 0, "r_a"), Event(20.0, 0, "r_b"),  # both within ±12 h of t=10 for node 0
            Event(50.0, 1, "r_far"),  # 20 h from t=30: only the widened ±24 h window reaches it
            Event(30.0, 0, "r_other_node")]  # same time, other node: never a reference for node 1
    res = alignment(gen, refs, embedder=EMB)
    assert res.values[0] == pytest.approx(cos([1, 1, 0], [0.5, 0.5, 0]))  # = 1: the centroid, not each reference
    assert res.values[1] == pytest.approx(cos([0, 1, 0], [0, 0, 1]))
    assert math.isnan(res.values[2]) and "no held-out text of node 0 within ±24" in res.reasons[2]
    assert res.reasons[:2] == (None, None)
    assert res.extra["window_used"][:2].tolist() == [12.0, 24.0] and res.extra["n_refs"].tolist() == [2, 1, 0]
    narrow = alignment(gen, refs, embedder=EMB, window=12.0, wide_window=None)
    assert math.isnan(narrow.values[1]) and "±12" in narrow.reasons[1]
    wide = alignment(gen, refs, embedder=EMB, window=100.0, wide_window=200.0)
    assert wide.values[2] == pytest.approx(cos([0, 0, 2], np.mean([[1, 0, 0], [0, 1, 0], [0, 1, 1]], axis=0)))
    with pytest.raises(CascadeError, match="wide_window"):
        alignment(gen, refs, embedder=EMB, window=12.0, wide_window=6.0)


def test_global_and_local_drift_by_hand():
    texts = ["seed", "g1", "g2", "g3"]
    gd = global_drift(texts[1:], "seed", embedder=EMB)
    np.testing.assert_allclose(gd.values, [1 - cos([1, 1, 0], [1, 0, 0]), 1.0, 1.0], rtol=1e-12)
    memories = [
        [MemoryItem(0, 0, 1.0)],
        [MemoryItem(1, 0, 0.75), MemoryItem(0, 0, 0.25)],
        [],
    ]
    ld = local_drift(texts, memories, embedder=EMB)
    assert ld.values[0] == pytest.approx(1 - cos([1, 1, 0], [1, 0, 0]))
    assert ld.values[1] == pytest.approx(1 - cos([0, 1, 0], 0.75 * np.array([1, 1, 0]) + 0.25 * np.array([1, 0, 0])))
    assert math.isnan(ld.values[2]) and ld.reasons[2] == "empty memory"
    # uniform weights of a baseline are just the weights it returned
    uni = local_drift(texts[:3], [[MemoryItem(0, 0, 1.0)], [(1, 0.5), (0, 0.5)]], embedder=EMB)
    assert uni.values[1] == pytest.approx(1 - cos([0, 1, 0], [1, 0.5, 0]))
    with pytest.raises(CascadeError, match="one memory per generated text"):
        local_drift(texts, memories[:2], embedder=EMB)
    with pytest.raises(CascadeError, match="earlier event"):
        local_drift(texts[:2], [[MemoryItem(1, 0, 1.0)]], embedder=EMB)


def test_trend_matches_numpy_and_the_t_interval():
    rng = np.random.default_rng(0)
    x = np.arange(1, 21)
    y = 0.5 + 0.01 * x + rng.normal(0, 0.02, x.size)
    tr = trend(y)
    b, a = np.polyfit(x, y, 1)
    assert tr.slope == pytest.approx(b, rel=1e-10) and tr.intercept == pytest.approx(a, rel=1e-10)
    resid = y - (a + b * x)
    se = math.sqrt(resid @ resid / (x.size - 2) / ((x - x.mean()) @ (x - x.mean())))
    half = stats.t.ppf(0.975, x.size - 2) * se
    assert (tr.ci_low, tr.ci_high) == pytest.approx((b - half, b + half), rel=1e-9)
    assert tr.label == "increasing" and tr.n == 20
    assert trend(-y).label == "decreasing"
    assert trend(0.5 + rng.normal(0, 0.02, 20)).label == "flat"
    assert trend([0.3, 0.3, 0.3, 0.3]).label == "flat"  # a perfect flat fit
    assert trend([0.1, 0.2]).label == "undetermined" and trend([0.1, 0.2]).slope == pytest.approx(0.1)
    with_nan = trend([0.1, np.nan, 0.3, 0.4, 0.5])
    assert with_nan.n == 4 and with_nan.slope == pytest.approx(np.polyfit([1, 3, 4, 5], [0.1, 0.3, 0.4, 0.5], 1)[0])


def test_summary_late_stage_is_the_last_third():
    values = np.arange(1.0, 11.0)  # L = 10: late = last ceil(10/3) = 4 steps, 7..10
    s = summarize(values, name="alignment")
    assert s.late_start == 7 and s.late_mean == pytest.approx(np.mean([7, 8, 9, 10]))
    assert s.mean == pytest.approx(5.5) and s.trend.label == "increasing" and s.n == 10 and s.n_missing == 0
    assert summarize([1.0, 2.0, 3.0]).late_start == 3
    assert summarize(values, late_fraction=0.5).late_mean == pytest.approx(np.mean([6, 7, 8, 9, 10]))
    d = s.as_dict()
    assert d["alignment_trend"] == "increasing" and d["alignment_late"] == pytest.approx(8.5)


def test_interval_and_aggregate_over_runs():
    iv = interval([0.6, 0.65, 0.7])
    half = stats.t.ppf(0.975, 2) * 0.05 / math.sqrt(3)
    assert (iv.mean, iv.sd, iv.n) == pytest.approx((0.65, 0.05, 3)) and (iv.ci_low, iv.ci_high) == pytest.approx((0.65 - half, 0.65 + half))
    assert math.isnan(interval([0.5]).ci_low) and interval([]).n == 0

    specs = (NodeSpec("a", "x"), NodeSpec("b", "y"))
    runs = []
    for shift in (0.0, 0.1):
        steps = [CascadeStep(t, float(t), t % 2, "g1" if t % 2 else "g2", (MemoryItem(t - 1, 0, 1.0),), "", 0)
                 for t in range(1, 4)]
        run = CascadeRun({}, Event(0.0, 0, "seed"), specs, steps)
        refs = [Event(float(t) + shift, t % 2, "r_a") for t in range(1, 4)]
        runs.append(evaluate_run(run, refs, embedder=EMB))
    d = runs[0]
    assert set(d.curves) == {"alignment", "global_drift", "local_drift"} and d.alignment is d.curves["alignment"]
    np.testing.assert_allclose(d.alignment.values, [cos([1, 1, 0], [1, 0, 0]), 0.0, cos([1, 1, 0], [1, 0, 0])])
    agg = aggregate(runs)
    assert agg["alignment"]["mean"].n == 2 and agg["alignment"]["trends"] == {"flat": 2}
    assert agg["global_exceeds_local"] in (0, 1, 2) and agg["drift_gap"].n == 2
    no_refs = evaluate_run(CascadeRun({}, Event(0.0, 0, "seed"), specs, steps))
    assert "alignment" not in no_refs.summaries
    with pytest.raises(CascadeError):
        aggregate([])


def test_curve_band():
    mean, lo, hi = curve_band([[1.0, 2.0, 3.0], [3.0, 4.0]])
    np.testing.assert_allclose(mean, [2.0, 3.0, 3.0])
    half = stats.t.ppf(0.975, 1) * math.sqrt(2) / math.sqrt(2)
    np.testing.assert_allclose(hi[:2] - mean[:2], [half, half])
    assert math.isnan(lo[2])
