"""Evaluation of uncertainty metrics: ranking metrics against brute force, calibration by hand, bootstrap
coverage by simulation, McNemar/Newcombe against hand and published values, and the four graders.

Tolerances: 1e-12 where both sides compute the same rational number in floating point (a few dozen
additions, so round-off is ~1e-15); statistical tolerances are stated where used."""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import pytest
from fakes import CannedLLM
from scipy.stats import norm

from uncertainty_lab.semantic.calibration import (
    IsotonicCalibrator,
    PlattCalibrator,
    calibration_bins,
    ece,
    pool_adjacent_violators,
    reliability_diagram,
)
from uncertainty_lab.semantic.correctness import (
    AnswerGrader,
    Correctness,
    check_answer,
    correctness_labels,
    is_correct,
    parse_verdict,
    parse_yes_no,
)
from uncertainty_lab.semantic.evaluation import (
    accuracy,
    accuracy_ci,
    auprc,
    aurac,
    aurc,
    auroc,
    bootstrap_ci,
    newcombe_paired_ci,
    paired_comparison,
    prr,
    rejection_curve,
    risk_coverage_curve,
)

EXACT = 1e-12


def tied_data(seed, n=40):
    """Integer confidences in 0..4 (many ties) and random labels with both classes."""
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.55
    y[:2] = [True, False]
    return rng.integers(0, 5, n).astype(float), y


# ---------------------------------------------------------------- AUROC


def brute_auroc(s, y):
    pos, neg = s[y], s[~y]
    wins = sum((p > q) + 0.5 * (p == q) for p in pos for q in neg)
    return wins / (len(pos) * len(neg))


@pytest.mark.parametrize("seed", range(5))
def test_auroc_matches_pair_counting_with_ties(seed):
    s, y = tied_data(seed)
    assert auroc(s, y) == pytest.approx(brute_auroc(s, y), abs=EXACT)
    # uncertainty = −confidence gives the same number when flagged
    assert auroc(-s, y, higher_is_confident=False) == pytest.approx(auroc(s, y), abs=EXACT)
    assert auroc(s, y, higher_is_confident=False) == pytest.approx(1 - auroc(s, y), abs=EXACT)


def test_auroc_known_cases_and_undefined():
    y = np.array([1, 1, 0, 0, 1, 0])
    assert auroc(y.astype(float), y) == 1.0
    assert auroc(-y.astype(float), y) == 0.0
    assert auroc(np.full(6, 0.3), y) == 0.5
    assert math.isnan(auroc([0.1, 0.9], [True, True]))


def test_ranking_metrics_take_one_resample_per_row():
    rows = [tied_data(seed) for seed in range(4)]
    s, y = np.stack([r[0] for r in rows]), np.stack([r[1] for r in rows])
    for fn in (auroc, auprc, aurac, prr, aurc):
        np.testing.assert_allclose(fn(s, y), [fn(a, b) for a, b in rows], atol=EXACT, err_msg=fn.__name__)
    np.testing.assert_allclose(accuracy(y), y.mean(axis=1))


# ---------------------------------------------------------------- AUPRC


def brute_ap(s, y):
    ap, prev_recall = 0.0, 0.0
    for t in sorted(set(s), reverse=True):
        kept = s >= t
        tp = (kept & y).sum()
        precision, recall = tp / kept.sum(), tp / y.sum()
        ap += (recall - prev_recall) * precision
        prev_recall = recall
    return ap


@pytest.mark.parametrize("seed", range(5))
def test_auprc_matches_brute_force_average_precision(seed):
    s, y = tied_data(seed)
    assert auprc(s, y) == pytest.approx(brute_ap(s, y), abs=EXACT)
    assert auprc(s, y, positive="wrong") == pytest.approx(brute_ap(-s, ~y), abs=EXACT)
    s_cont = s + np.random.default_rng(seed).random(s.size)  # no ties
    assert auprc(s_cont, y) == pytest.approx(brute_ap(s_cont, y), abs=EXACT)


def test_auprc_known_cases():
    y = np.array([1, 0, 1, 1, 0], dtype=bool)
    assert auprc(y.astype(float), y) == 1.0
    assert auprc(np.zeros(5), y) == pytest.approx(0.6, abs=EXACT)  # one threshold: precision = base rate
    assert auprc([0.9, 0.8, 0.7], [1, 0, 1]) == pytest.approx((1 + 2 / 3) / 2, abs=EXACT)
    assert math.isnan(auprc([0.2, 0.4], [0, 0]))


# ---------------------------------------------------------------- rejection curve, AURAC, PRR


def test_rejection_curve_hand_case():
    curve = rejection_curve([0.9, 0.8, 0.7, 0.6], [1, 0, 1, 0])
    np.testing.assert_allclose(curve.coverage, [1, 0.75, 0.5, 0.25])
    np.testing.assert_allclose(curve.accuracy, [0.5, 2 / 3, 0.5, 1.0], atol=EXACT)
    assert curve.area == pytest.approx((1 + 0.5 + 2 / 3 + 0.5) / 4, abs=EXACT)
    assert aurac([0.9, 0.8, 0.7, 0.6], [1, 0, 1, 0]) == pytest.approx(curve.area, abs=EXACT)
    cov, risk = risk_coverage_curve([0.9, 0.8, 0.7, 0.6], [1, 0, 1, 0])
    np.testing.assert_allclose(risk, 1 - curve.accuracy)
    assert aurc([0.9, 0.8, 0.7, 0.6], [1, 0, 1, 0]) == pytest.approx(1 - curve.area, abs=EXACT)


def test_rejection_curve_averages_over_tie_breaking():
    s = np.array([0.9, 0.5, 0.5, 0.5, 0.2, 0.2])
    y = np.array([0, 1, 0, 1, 1, 0], dtype=bool)
    curves = []
    for p in itertools.permutations(range(1, 4)):
        for q in itertools.permutations(range(4, 6)):
            order = [0, *p, *q]
            curves.append(np.cumsum(y[order]) / np.arange(1, 7))
    expected = np.mean(curves, axis=0)[::-1]
    np.testing.assert_allclose(rejection_curve(s, y).accuracy, expected, atol=EXACT)


def test_prr_oracle_reversed_constant_and_undefined():
    y = np.array([1, 1, 0, 0, 1, 0, 1, 0], dtype=bool)
    assert prr(y.astype(float), y) == pytest.approx(1.0, abs=EXACT)
    # balanced labels: the reversed curve is the oracle's mirror image about the random line
    assert prr(-y.astype(float), y) == pytest.approx(-1.0, abs=EXACT)
    # unbalanced, by hand: oracle acc (1, 1/2, 1/3) -> 11/18, random 1/3, reversed (0, 0, 1/3) -> 1/9
    assert prr([0.0, 1.0, 1.0], [1, 0, 0]) == pytest.approx((1 / 9 - 1 / 3) / (11 / 18 - 1 / 3), abs=EXACT)
    assert prr([0.0, 1.0, 1.0], [1, 0, 0]) == pytest.approx(-0.8, abs=EXACT)
    # a constant confidence is random rejection: exactly 0 (ties are averaged, not broken by index)
    assert prr(np.full(8, 0.4), y) == pytest.approx(0.0, abs=EXACT)
    assert math.isnan(prr([0.1, 0.5, 0.9], [1, 1, 1]))  # oracle = random: undefined


# ---------------------------------------------------------------- calibration


def test_ece_hand_cases():
    c = [0.1, 0.2, 0.7, 0.8, 0.9]
    y = [0, 1, 1, 1, 0]
    # bins [0, .5): conf .15, acc .5 (weight 2/5); [.5, 1]: conf .8, acc 2/3 (weight 3/5)
    assert ece(c, y, n_bins=2) == pytest.approx(0.4 * 0.35 + 0.6 * (0.8 - 2 / 3), abs=EXACT)
    bins = calibration_bins(c, y, n_bins=2)
    np.testing.assert_array_equal(bins.count, [2, 3])
    # equal mass with 2 bins of 5 answers: ranks 0-2 -> bin 0 (.1, .2, .7), ranks 3-4 -> bin 1 (.8, .9)
    assert ece(c, y, n_bins=2, strategy="equal_mass") == pytest.approx(
        0.6 * abs(2 / 3 - 1.0 / 3) + 0.4 * abs(0.5 - 0.85), abs=EXACT)
    assert ece([0.0, 1.0], [0, 1]) == 0.0
    with pytest.raises(ValueError, match="confidence must lie in"):
        ece([0.2, 1.3], [0, 1])
    with pytest.raises(ValueError, match="strategy"):
        ece(c, y, strategy="quantiles")


def test_ece_of_calibrated_data_is_small():
    rng = np.random.default_rng(3)
    c = rng.random(20_000)
    y = rng.random(20_000) < c
    # 10 bins of ~2000: each bin's accuracy has SD ≤ √(.25/2000) ≈ 0.011, so ECE ≈ E|N(0, .011)| ≈ 0.009;
    # 0.03 is ~3 SD above that, while a miscalibration of 0.1 would give ECE ≈ 0.1
    assert ece(c, y) < 0.03
    assert ece(np.clip(c + 0.1, 0, 1), y) > 0.07


def test_reliability_diagram_returns_a_figure_with_counts():
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

    rng = np.random.default_rng(0)
    c = rng.random(200)
    fig = reliability_diagram(c, rng.random(200) < c, n_bins=5)
    try:
        assert isinstance(fig, Figure)
        ax = fig.axes[0]
        assert "ECE" in ax.get_title()
        counts = sorted(int(t.get_text()[2:]) for t in ax.texts if t.get_text().startswith("n="))
        assert sum(counts) == 200 and len(counts) == 5
    finally:
        plt.close(fig)


def brute_isotonic(y, w):
    """f_i = max_{j ≤ i} min_{k ≥ i} (weighted mean of y_j..y_k): the min-max formula of isotonic regression."""
    n = len(y)

    def avg(j, k):
        return np.dot(w[j:k + 1], y[j:k + 1]) / w[j:k + 1].sum()

    return np.array([max(min(avg(j, k) for k in range(i, n)) for j in range(i + 1)) for i in range(n)])


def test_pool_adjacent_violators_hand_case_and_brute_force():
    np.testing.assert_allclose(pool_adjacent_violators([0, 1, 0, 0, 1]), [0, 1 / 3, 1 / 3, 1 / 3, 1], atol=EXACT)
    np.testing.assert_allclose(pool_adjacent_violators([3, 1, 2], [1, 3, 1]), [1.5, 1.5, 2], atol=EXACT)
    from scipy.optimize import isotonic_regression

    rng = np.random.default_rng(1)
    for _ in range(20):
        y, w = rng.normal(size=12), rng.uniform(0.1, 3, size=12)
        fit = pool_adjacent_violators(y, w)
        np.testing.assert_allclose(fit, brute_isotonic(y, w), atol=1e-12)
        np.testing.assert_allclose(fit, isotonic_regression(y, weights=w).x, atol=1e-12)


def test_isotonic_calibrator_is_monotone_and_pools_ties():
    rng = np.random.default_rng(2)
    s = rng.normal(size=500).round(1)  # rounded: many tied scores
    y = rng.random(500) < norm.cdf(s)
    cal = IsotonicCalibrator().fit(s, y)
    grid = np.linspace(-4, 4, 401)
    p = cal.predict(grid)
    assert np.all(np.diff(p) >= 0) and p.min() >= 0 and p.max() <= 1
    assert len(cal.x_) == len(np.unique(s))
    # hand case: scores 1,2,2,3 with labels 1,0,0,1 -> tie pooled (0), then 1 > 0 violates -> pooled 1/3
    cal = IsotonicCalibrator().fit([1, 2, 2, 3], [1, 0, 0, 1])
    np.testing.assert_allclose(cal.predict([1, 2, 3, 10]), [1 / 3, 1 / 3, 1, 1], atol=EXACT)
    unc = IsotonicCalibrator(higher_is_confident=False).fit(-s, y)
    assert np.all(np.diff(unc.predict(grid)) <= 0)
    with pytest.raises(RuntimeError, match="not fitted"):
        IsotonicCalibrator().predict([0.5])


def test_platt_recovers_parameters_and_matches_statsmodels():
    import statsmodels.api as sm

    a, b, n = 2.0, -0.5, 20_000
    rng = np.random.default_rng(4)
    s = rng.normal(0.0, 1.0, n)
    y = rng.random(n) < 1 / (1 + np.exp(-(a * s + b)))
    cal = PlattCalibrator().fit(s, y)
    # tolerance: 4 standard errors from the inverse Fisher information at the true parameters
    # (about 0.03 for a and 0.02 for b here), so the seeded check is not a coin flip
    p = 1 / (1 + np.exp(-(a * s + b)))
    X = np.column_stack([s, np.ones(n)])
    se = np.sqrt(np.diag(np.linalg.inv(X.T @ (X * (p * (1 - p))[:, None]))))
    assert abs(cal.a_ - a) < 4 * se[0] and abs(cal.b_ - b) < 4 * se[1], (cal.a_, cal.b_, se)
    ref = sm.Logit(y.astype(float), X).fit(disp=0).params
    np.testing.assert_allclose([cal.a_, cal.b_], ref, atol=1e-5)  # the same MLE, two optimisers
    assert np.all(np.diff(cal.predict(np.linspace(-3, 3, 50))) > 0)
    smoothed = PlattCalibrator(platt_targets=True).fit(s, y)
    assert abs(smoothed.a_ - cal.a_) < 0.01  # the (n+1)/(n+2) targets barely move a 20k-point fit
    with pytest.raises(ValueError, match="one class"):
        PlattCalibrator().fit([0.1, 0.2], [1, 1])


# ---------------------------------------------------------------- bootstrap and Wilson


def test_bootstrap_ci_covers_true_auroc_at_about_the_nominal_rate():
    # confidence ~ N(d·correct, 1): true AUROC = Φ(d/√2). 200 simulated studies of n = 100.
    # Monte-Carlo SD of the coverage estimate at 0.95 is √(.95·.05/200) ≈ 0.015; percentile bootstrap
    # intervals for AUROC under-cover by ~1–3 points at this n. [0.88, 0.99] allows that shortfall plus
    # ~3 SD of noise below, and ~2.5 SD above (far-too-wide intervals would push coverage to ~1).
    d = 1.0
    true_auc = norm.cdf(d / np.sqrt(2))
    rng = np.random.default_rng(5)
    hits = 0
    for rep in range(200):
        y = rng.random(100) < 0.6
        s = rng.normal(d * y, 1.0)
        ci = bootstrap_ci(auroc, s, y, n_boot=500, seed=rep)
        hits += ci.low <= true_auc <= ci.high
    assert 0.88 <= hits / 200 <= 0.99, hits / 200


def test_bootstrap_skips_and_counts_degenerate_resamples():
    s = np.linspace(0, 1, 8)
    y = np.array([1, 0, 0, 0, 0, 0, 0, 0], dtype=bool)
    ci = bootstrap_ci(auroc, s, y, n_boot=1000, seed=0)
    # P(resample misses the one correct answer) = (7/8)^8 ≈ 0.344: expect 344 ± 15 (1 SD) skipped
    assert 344 - 75 <= ci.n_skipped <= 344 + 75
    assert ci.n_skipped == int(np.isnan(ci.replicates).sum())
    assert "skipped" in str(ci)


def test_bootstrap_vectorised_equals_loop_and_is_reproducible():
    s, y = tied_data(7, n=60)
    fast = bootstrap_ci(auroc, s, y, n_boot=300, seed=11)
    slow = bootstrap_ci(lambda a, b: auroc(a, b), s, y, n_boot=300, seed=11)
    np.testing.assert_allclose(fast.replicates, slow.replicates, atol=EXACT)
    assert (fast.low, fast.high) == pytest.approx((slow.low, slow.high), abs=EXACT)
    again = bootstrap_ci(auroc, s, y, n_boot=300, seed=np.random.default_rng(11))
    np.testing.assert_array_equal(again.replicates, fast.replicates)
    flipped = bootstrap_ci(functools.partial(auroc, higher_is_confident=False), -s, y, n_boot=300, seed=11)
    np.testing.assert_allclose(flipped.replicates, fast.replicates, atol=EXACT)  # partial still vectorised
    basic = bootstrap_ci(auroc, s, y, n_boot=300, seed=11, method="basic")
    assert basic.low == pytest.approx(2 * fast.estimate - fast.high, abs=EXACT)
    assert basic.high == pytest.approx(2 * fast.estimate - fast.low, abs=EXACT)
    assert fast.low <= fast.estimate <= fast.high


def test_accuracy_ci_is_the_wilson_interval():
    y = np.r_[np.ones(35), np.zeros(15)]
    ci = accuracy_ci(y)
    z, n, p = norm.ppf(0.975), 50, 0.7
    centre = (p + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / (1 + z**2 / n)
    assert (ci.low, ci.high) == pytest.approx((centre - half, centre + half), abs=1e-12)
    assert ci.successes == 35 and ci.n == 50 and "Wilson" in str(ci)


# ---------------------------------------------------------------- paired comparison


def paired(only_a, only_b, both, neither):
    a = np.r_[np.ones(only_a), np.zeros(only_b), np.ones(both), np.zeros(neither)].astype(bool)
    b = np.r_[np.zeros(only_a), np.ones(only_b), np.ones(both), np.zeros(neither)].astype(bool)
    return a, b


def test_mcnemar_on_hassum_musique_counts_matches_the_exact_binomial():
    # HASSUM vs HASHIRU on MuSiQue: 7 right only for HASSUM, 17 only for HASHIRU, 38 both, 38 neither
    res = paired_comparison(*paired(7, 17, 38, 38), names=("HASSUM", "HASHIRU"))
    hand = 2 * sum(math.comb(24, k) for k in range(8)) / 2**24  # two-sided exact binomial, p = 1/2
    assert res.p_value == pytest.approx(hand, rel=1e-12) and 0.063 < hand < 0.065
    assert (res.only_a, res.only_b, res.both, res.neither, res.n) == (7, 17, 38, 38, 100)
    assert (res.accuracy_a, res.accuracy_b, res.difference) == pytest.approx((0.45, 0.55, -0.10))
    assert res.se == pytest.approx(math.sqrt((24 / 100 - 0.01) / 100), rel=1e-12)
    assert not res.significant
    assert res.verdict.startswith("within noise: McNemar exact p = 0.064; the 10-point gap is about 2.1 standard errors")
    assert "Borderline" in res.verdict  # the Newcombe interval just excludes 0 while the exact test does not reject
    np.testing.assert_array_equal(res.table, [[38, 7], [17, 38]])


def test_paired_comparison_real_difference_and_no_difference():
    res = paired_comparison(*paired(3, 17, 51, 29), names=("HASSUM", "HASHIRU"))  # HotpotQA counts
    assert res.p_value == pytest.approx(2 * sum(math.comb(20, k) for k in range(4)) / 2**20, rel=1e-12)
    assert res.significant and res.verdict.startswith("real difference at the 95% level: HASHIRU is ahead")
    assert res.ci_high < 0
    boot = paired_comparison(*paired(3, 17, 51, 29), ci="bootstrap", seed=1)
    assert boot.ci_low < -0.14 < boot.ci_high < 0  # the paired bootstrap agrees in sign and scale
    same = paired_comparison(*paired(0, 0, 40, 10))
    assert same.p_value == 1.0 and same.verdict.startswith("no difference")


def test_newcombe_interval_matches_published_values():
    # Fagerland, Lydersen & Laake, "Statistical Analysis of Contingency Tables" (Cavo et al. 2012 data):
    # estimate -0.0621, 95% CI -0.1186 to -0.0046 (given to 4 decimals, hence atol 5e-5)
    low, high = newcombe_paired_ci(59, 6, 16, 80)
    assert (low, high) == pytest.approx((-0.1186, -0.0046), abs=5e-5)


def test_paired_comparison_validates_inputs():
    with pytest.raises(ValueError, match="correct_a and correct_b must have the same length"):
        paired_comparison([1, 0, 1], [1, 0])
    with pytest.raises(ValueError, match="correct_b contains NaN"):
        paired_comparison([1.0, 0.0], [1.0, np.nan])
    with pytest.raises(ValueError, match="correct_a must be boolean-like .* 2"):
        paired_comparison([1, 2], [1, 0])
    with pytest.raises(ValueError, match="correct_a contains None"):
        paired_comparison([True, None], [True, False])
    with pytest.raises(ValueError, match="confidence contains NaN"):
        auroc([0.1, np.nan], [1, 0])
    with pytest.raises(ValueError, match="confidence and correct must have the same length"):
        auroc([0.1, 0.2, 0.3], [1, 0])


# ---------------------------------------------------------------- correctness


def test_normalised_and_contains_matching():
    assert is_correct("The Canberra!", ["canberra"]) is True
    assert is_correct("Canberra, Australia", ["Canberra"]) is False
    res = check_answer("It is Canberra, Australia.", ["Sydney", "Canberra"], "contains")
    assert res.correct and res.matched == "Canberra" and "whole words" in res.evidence
    assert is_correct("Canberrans love it", "Canberra", "contains") is False  # whole words only
    empty = check_answer("The.", ["Canberra"], "contains")
    assert empty.correct is False and "empty answer" in empty.evidence
    with pytest.raises(ValueError, match="did you mean 'normalised'"):
        is_correct("x", ["x"], "normalized")
    with pytest.raises(ValueError, match=r"gold_aliases\[1\]"):
        is_correct("x", ["x", "  "])
    with pytest.raises(ValueError, match="gold_aliases is empty"):
        is_correct("x", [])


def test_embedding_match_with_the_real_embedder():
    grader = AnswerGrader("embedding")
    results = grader.check_many(["The capital is Canberra.", "Sydney"], [["Canberra"], ["Canberra"]])
    assert results[0].correct and results[0].score >= 0.8 and results[0].matched == "Canberra"
    assert results[1].correct is False and 0.5 < results[1].score < 0.8  # topically close, still wrong
    assert "cosine" in results[1].evidence
    # the threshold is the knob: lowered far enough, a wrong city passes
    assert is_correct("Sydney", ["Canberra"], "embedding", embedder=grader.embedder, threshold=0.6) is True


@pytest.mark.parametrize("reply, verdict", [
    ("Yes.", True), ("no", False), ("NO, the proposed answer is incorrect.", False),
    ("The proposed answer is correct.", True), ("The answer is not correct.", False),
    ("It isn't right.", False), ("The proposed answer is incorrect. The gold", False),
    ("Maybe.", None), ("", None), ("It is correct, or wrong.", None),
])
def test_parse_yes_no(reply, verdict):
    assert parse_yes_no(reply) is verdict


def test_llm_judge_reports_unparsed_replies_and_callers_count_them():
    reply = "The answer to this question is"
    stub = CannedLLM(lambda prompt: reply)
    res = check_answer("Sydney", ["Canberra"], "llm", llm=stub, question="Capital of Australia?")
    assert res.correct is None and not res.judged and "unparsed" in res.evidence and res.raw == reply
    assert res.uncertain and res.label == "uncertain"
    assert "Canberra" in stub.prompts[-1] and "Capital of Australia?" in stub.prompts[-1]
    results = [Correctness(True, "llm", ""), res, Correctness(False, "llm", "")]
    with pytest.raises(ValueError, match=r"1 of 3 answers are unjudged \(labels: .*'uncertain': 1"):
        correctness_labels(results)
    labels, kept = correctness_labels(results, unjudged="drop")
    np.testing.assert_array_equal(labels, [True, False])
    np.testing.assert_array_equal(kept, [0, 2])
    with pytest.raises(ValueError, match="needs llm="):
        AnswerGrader("llm")


def test_llm_judge_through_the_real_embedded_backend():
    from uncertainty_lab.llm import get_llm

    llm = get_llm("embedded")
    grader = AnswerGrader("llm", llm=llm, max_tokens=12)
    res = grader.check("Canberra", ["Canberra"], question="What is the capital of Australia?")
    assert res.method == "llm" and isinstance(res.raw, str) and res.raw.strip()
    label, parsed = parse_verdict(res.raw)  # whatever the weak model says, it is parsed, not guessed
    assert res.label == label and ("unparsed" in res.evidence) is (not parsed)
    assert llm.label in res.evidence
    again = AnswerGrader("llm", llm=llm, max_tokens=12).check("Canberra", ["Canberra"],
                                                              question="What is the capital of Australia?")
    assert again == res  # temperature 0, fixed seed, served from the per-test cache


# --- statistics at their edges (hardening) ---------------------------------------------------------------------


@pytest.mark.parametrize("exact", [True, False])
def test_mcnemar_with_no_discordant_pair_is_no_evidence(exact):
    """statsmodels' corrected χ² divides by zero here and reported p = 0 ("significant"); there is no evidence."""
    a = np.array([True, False, True, True, False])
    pc = paired_comparison(a, a, exact=exact)
    assert pc.p_value == 1.0
    assert pc.verdict.startswith("no difference")


def test_mcnemar_chi2_without_correction_when_discordant_counts_are_equal():
    """b = c > 0: R's mcnemar.test applies no continuity correction (χ² = 0, p = 1); (|b−c|−1)²/(b+c) would give
    χ² = 1/(b+c) > 0."""
    a = np.array([True, True, True, False, False, False, True, False])
    b = np.array([False, False, False, True, True, True, True, False])  # 3 only-A, 3 only-B
    assert paired_comparison(a, b, exact=False).p_value == 1.0


def test_mcnemar_chi2_matches_the_textbook_formula():
    from scipy.stats import chi2

    a = np.array([True] * 9 + [False] * 2 + [True] * 5 + [False] * 4)
    b = np.array([False] * 9 + [True] * 2 + [True] * 5 + [False] * 4)  # b = 9, c = 2
    assert paired_comparison(a, b, exact=False).p_value == pytest.approx(chi2.sf((9 - 2 - 1) ** 2 / 11, 1), rel=1e-12)


@pytest.mark.parametrize("n_bins", range(1, 60))
def test_a_confidence_on_a_bin_edge_goes_to_the_bin_it_opens(n_bins):
    """Bins are [k/B, (k+1)/B): c = k/B belongs to bin k. ⌊c·B⌋ put 15/22 in bin 14 (15/22·22 = 14.999…)."""
    for k in range(n_bins):
        c = k / n_bins
        bins = calibration_bins([c], [True], n_bins=n_bins)
        assert bins.count[k] == 1, (k, n_bins, bins.count)


def test_platt_on_separable_scores_does_not_claim_convergence():
    scores = np.array([0.1, 0.2, 0.3, 0.7, 0.8, 0.9])
    correct = np.array([False, False, False, True, True, True])
    with pytest.warns(RuntimeWarning, match="separate right from wrong"):
        cal = PlattCalibrator().fit(scores, correct)
    assert cal.separable_ and not cal.converged_
    smoothed = PlattCalibrator(platt_targets=True).fit(scores, correct)  # a finite optimum exists
    assert smoothed.converged_ and not smoothed.separable_


def test_platt_on_overlapping_scores_converges_without_warning():
    import warnings

    scores = np.array([0.1, 0.6, 0.3, 0.4, 0.8, 0.9])
    correct = np.array([False, False, True, False, True, True])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cal = PlattCalibrator().fit(scores, correct)
    assert cal.converged_ and not cal.separable_
