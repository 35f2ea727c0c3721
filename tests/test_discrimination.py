"""Discrimination numbers with their evidence (semantic/discrimination.py): the value against sklearn and a
brute-force pair count, the stratified bootstrap interval against a brute-force loop with the same seed and against
DeLong's standard error, reproducibility, and the refusal below the minimum class count."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, roc_auc_score

from uncertainty_lab.semantic.discrimination import MIN_CLASS_COUNT, Discrimination, discrimination, shortage
from uncertainty_lab.semantic.evaluation import prr


def _data(n: int, share_right: float, shift: float, seed: int):
    rng = np.random.default_rng(seed)
    right = rng.random(n) < share_right
    return np.round(rng.normal(size=n) + shift * right, 1), right  # tenths: ties on purpose


def _pairs(conf, right) -> float:
    """AUROC by brute force: the share of (right, wrong) pairs with the right answer more confident, ties ½."""
    r, w = conf[right], conf[~right]
    return float(np.mean([1.0 if a > b else 0.5 if a == b else 0.0 for a in r for b in w]))


def test_the_value_is_the_auroc_sklearn_and_a_pair_count_give():
    conf, right = _data(120, 0.4, 0.8, seed=3)
    d = discrimination(conf, right, resamples=50)
    assert d.value == pytest.approx(roc_auc_score(right, conf), abs=1e-12)
    assert d.value == pytest.approx(_pairs(conf, right), abs=1e-12)
    # an uncertainty, negated: the same number
    assert discrimination(-conf, right, higher_is_confident=False, resamples=50).value == pytest.approx(d.value)
    # AUPRC scores wrong-answer detection: wrong answers are the positives, the uncertainty the score
    ap = discrimination(conf, right, metric="auprc", resamples=50)
    assert ap.value == pytest.approx(average_precision_score(~right, -conf), abs=1e-12) and ap.metric == "AUPRC"
    assert discrimination(conf, right, metric="prr", resamples=50).value == pytest.approx(prr(conf, right))
    assert (d.n, d.n_pos, d.n_neg, d.missing) == (120, int((~right).sum()), int(right.sum()), 0)


def test_the_interval_is_the_stratified_percentile_bootstrap_of_a_brute_force_loop():
    conf, right = _data(40, 0.5, 0.7, seed=5)
    d = discrimination(conf, right, resamples=200, level=0.9, seed=11)
    rng = np.random.default_rng(11)  # the scheme the module doc states: wrong answers' draws first, then right
    wrong_i, right_i = np.flatnonzero(~right), np.flatnonzero(right)
    draw_w = rng.integers(0, wrong_i.size, (200, wrong_i.size))
    draw_r = rng.integers(0, right_i.size, (200, right_i.size))
    reps = []
    for b in range(200):
        idx = np.concatenate([wrong_i[draw_w[b]], right_i[draw_r[b]]])
        reps.append(roc_auc_score(right[idx], conf[idx]))
    assert (d.low, d.high) == pytest.approx(tuple(np.percentile(reps, [5, 95])), abs=1e-12)
    assert d.low < d.value < d.high


def test_the_bootstrap_standard_error_is_close_to_delongs_on_a_large_sample():
    rng = np.random.default_rng(0)
    right = np.arange(1000) < 500
    conf = rng.normal(size=1000) + 0.9 * right
    d = discrimination(conf, right, resamples=1000, seed=1)
    x, y = conf[right], conf[~right]  # DeLong (1988): structural components of the Mann–Whitney statistic
    psi = (x[:, None] > y[None, :]) + 0.5 * (x[:, None] == y[None, :])
    se = math.sqrt(psi.mean(axis=1).var(ddof=1) / x.size + psi.mean(axis=0).var(ddof=1) / y.size)
    boot_se = (d.high - d.low) / (2 * 1.959964)
    # 1000 resamples estimate an SE to about ±4% (1/sqrt(2·1000) ≈ 2.2%, quantiles noisier): allow 10%
    assert boot_se == pytest.approx(se, rel=0.10)


def test_the_same_seed_gives_the_same_interval_and_another_seed_another():
    conf, right = _data(60, 0.5, 0.5, seed=2)
    a, b = discrimination(conf, right, seed=7), discrimination(conf, right, seed=7)
    assert a == b and (a.low, a.high) != (discrimination(conf, right, seed=8).low,
                                          discrimination(conf, right, seed=8).high)
    assert a.resamples == 2000 and a.level == 0.95 and a.seed == 7


def test_fewer_than_the_minimum_of_a_class_gives_no_value_but_the_reason():
    conf = np.linspace(0, 1, 10)
    one_right = np.arange(10) == 9
    d = discrimination(conf, one_right)
    assert d.value is None and d.low is None and not d.given and math.isnan(float(d))
    assert str(d) == "AUROC not given: 1 right answer and 9 wrong ones; at least 10 of each are needed"
    saved = json.loads(json.dumps(d.to_dict()))
    assert saved["value"] is None and (saved["n"], saved["n_pos"], saved["n_neg"]) == (10, 9, 1)
    assert saved["reason"] == "1 right answer and 9 wrong ones; at least 10 of each are needed"
    assert d.cell() == "not given: 1 right answer and 9 wrong ones; at least 10 of each are needed"
    # the boundary: 10 of each is enough, 9 of one is not
    assert discrimination(np.arange(20.0), np.arange(20) < 10).given
    assert not discrimination(np.arange(20.0), np.arange(20) < 9).given
    assert shortage(0, 0) == "no item has a score" and MIN_CLASS_COUNT == 10


def test_the_given_path_prints_value_interval_counts_and_method():
    conf, right = _data(90, 0.25, 1.0, seed=4)
    conf[:3] = np.nan  # no score: missing, left out of n
    d = discrimination(conf, right)
    assert d.given and d.missing == 3 and d.n == 87 and d.n_pos + d.n_neg == 87
    text = str(d)
    assert text.startswith(f"AUROC {d.value:.3f} [{d.low:.3f}, {d.high:.3f}] (95% stratified percentile bootstrap, "
                           "2000 resamples, seed 0); ")
    assert f"n = 87: {d.n_pos} wrong answers (positives), {d.n_neg} right (negatives); 3 without a score" in text
    assert Discrimination.from_dict(d.to_dict()) == d


def test_older_rows_are_read_and_the_minimum_applied_again():
    old = {"n": 60, "wrong": 56, "missing": 0, "estimate": 0.629, "low": 0.283, "high": 0.907}
    d = Discrimination.from_dict(old, resamples=2000, seed=0, method="percentile bootstrap")
    assert not d.given and d.reason == "4 right answers and 56 wrong ones; at least 10 of each are needed"
    ok = Discrimination.from_dict({**old, "wrong": 40}, resamples=2000, seed=0, method="percentile bootstrap")
    assert ok.cell() == "0.629 [0.283, 0.907]" and ok.interval() == "95% percentile bootstrap, 2000 resamples, seed 0"


@pytest.mark.parametrize("kwargs, match", [
    ({"metric": "aurc"}, "metric must be one of auroc, auprc, prr"),
    ({"resamples": 0}, "resamples must be a positive integer"),
    ({"level": 95}, r"level must be in \(0, 1\)"),
    ({"min_class": 0}, "min_class must be a positive integer"),
])
def test_bad_settings_are_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        discrimination([0.1, 0.2], [True, False], **kwargs)
