"""Paired comparisons of selectors (cascade/comparisons.py) on a hand-made result: the per-step differences of
runs with the same seed, the run-level mean with its t-interval (clipped to the range), the verdicts, the rows
ranked by mean S, and the sentences notebook 02 prints from them."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pytest
from scipy import stats

from uncertainty_lab.cascade.comparisons import (
    baseline_of,
    comparison_rows,
    headline,
    paired_difference,
    paired_run_difference,
    paired_steps,
    selector_table,
    verdict,
)
from uncertainty_lab.cascade.diagnostics import Interval

NAN = math.nan


@dataclass
class Config:
    late_fraction: float = 1 / 3


@dataclass
class Stub:
    """What the comparisons read of a CascadeResult: curves per (selector, k, run), run rows and table rows."""

    alignment: dict[tuple[str, int, int], list[float]]
    copies: dict[tuple[str, int, int], float]
    config: Config = field(default_factory=Config)

    @property
    def conditions(self):
        return list(dict.fromkeys((s, k) for s, k, _ in self.alignment))

    def keys(self, selector, k):
        return [key for key in self.alignment if key[:2] == (selector, k)]

    def curves(self, name, selector, k):
        assert name == "alignment"
        return [np.array(self.alignment[key]) for key in self.keys(selector, k)]

    def run_rows(self):
        return [{"selector": s, "k": k, "run": r, "copies": self.copies[(s, k, r)]} for s, k, r in self.alignment]

    def rows(self):
        out = []
        for s, k in self.conditions:
            means = [np.nanmean(c) for c in self.curves("alignment", s, k)]
            lates = [c[-1] for c in self.curves("alignment", s, k)]
            n, m = len(means), float(np.mean(means))
            half = stats.t.ppf(0.975, n - 1) * np.std(means, ddof=1) / math.sqrt(n) if n > 1 else NAN
            out.append({"selector": s, "k": k, "runs": n, "mean_S": m, "late_S": float(np.nanmean(lates)),
                        "mean_S_ci": [m - half, m + half],
                        "copies": float(np.mean([self.copies[key] for key in self.keys(s, k)]))})
        return out


def three_runs():
    return Stub(
        alignment={("hawkes", 3, 0): [0.10, 0.20, NAN], ("hawkes", 3, 1): [0.50, 0.10, 0.40],
                   ("hawkes", 3, 2): [0.10, 0.20, 0.10], ("recency", 3, 0): [0.10, 0.10, 0.40],
                   ("recency", 3, 1): [0.20, NAN, 0.10], ("recency", 3, 2): [0.20, 0.30, 0.20]},
        copies={("hawkes", 3, 0): 0.7, ("hawkes", 3, 1): 0.8, ("hawkes", 3, 2): 0.6,
                ("recency", 3, 0): 0.5, ("recency", 3, 1): 0.55, ("recency", 3, 2): 0.45})


def test_paired_steps_differ_step_by_step_within_a_run():
    d = paired_steps(three_runs(), "hawkes", "recency", 3)
    want = np.array([[0.0, 0.1, NAN], [0.3, NAN, 0.3], [-0.1, -0.1, -0.1]])
    assert d.shape == (3, 3) and np.allclose(d, want, equal_nan=True)


def test_the_paired_difference_is_a_t_interval_over_the_runs():
    per_run = [0.05, 0.3, -0.1]  # each run's mean over the steps where both are defined
    iv = paired_difference(three_runs(), "hawkes", "recency", 3)
    mean, half = np.mean(per_run), stats.t.ppf(0.975, 2) * np.std(per_run, ddof=1) / math.sqrt(3)
    assert iv.n == 3 and iv.mean == pytest.approx(mean)
    assert (iv.ci_low, iv.ci_high) == pytest.approx((mean - half, mean + half))
    assert verdict(iv) == "within noise"
    late = paired_difference(three_runs(), "hawkes", "recency", 3, late=True)  # the last ceil(3 / 3) = 1 step
    assert late.n == 2 and late.mean == pytest.approx(0.1) and late.sd == pytest.approx(0.4 / math.sqrt(2))


def test_intervals_are_clipped_to_the_range_of_the_difference():
    wide = Stub(alignment={("a", 1, 0): [0.9], ("a", 1, 1): [-0.9], ("b", 1, 0): [-0.9], ("b", 1, 1): [0.9]},
                copies={("a", 1, 0): 1.0, ("a", 1, 1): 0.0, ("b", 1, 0): 0.0, ("b", 1, 1): 1.0})
    iv = paired_difference(wide, "a", "b", 1)  # differences +1.8 and −1.8 over two runs: t = 12.7
    assert (iv.ci_low, iv.ci_high) == (-2.0, 2.0)
    copies = paired_run_difference(wide, "a", "b", 1)
    assert (copies.ci_low, copies.ci_high) == (-1.0, 1.0)


def test_verdicts():
    assert verdict(Interval(0.1, 0.05, 3, 0.02, 0.2)) == "higher"
    assert verdict(Interval(-0.1, 0.05, 3, -0.2, -0.02)) == "lower"
    assert verdict(Interval(0.1, NAN, 1, NAN, NAN)) == "no interval (fewer than 2 runs)"
    assert verdict(Interval(NAN, NAN, 0, NAN, NAN)) == "undefined"


def test_rows_rank_by_mean_s_and_pair_with_the_baseline():
    result = three_runs()
    assert baseline_of(result) == "recency" and baseline_of(result, "random") == "hawkes"
    rows = comparison_rows(result)
    assert [(r["rank"], r["selector"]) for r in rows] == [(1, "hawkes"), (2, "recency")]
    hawkes, recency = rows
    assert "difference" not in recency and hawkes["verdict"] == "within noise"
    assert hawkes["copies_difference"].mean == pytest.approx(0.2) and hawkes["copies_verdict"] == "higher"
    assert -1.0 <= hawkes["mean_S_ci"][0] <= hawkes["mean_S_ci"][1] <= 1.0
    table = selector_table(rows)
    assert table.columns[:4] == ["rank", "selector", "mean S [95% CI]", "late S"]
    assert table[0]["copies − recency (points)"] == "+20 [+8, +32]" and table[1]["verdict"] == "(baseline)"


def test_headline_states_the_ranking_the_noise_and_the_copies():
    text = headline(comparison_rows(three_runs()))
    assert "`hawkes` came first, `recency` last of 2" in text
    assert "**within noise**" in text
    assert "`hawkes` 70%, `recency` 50%" in text and "`hawkes` − `recency` = +20 points [+8, +32]" in text and "the clearest effect of the memory in this run" in text
    one = Stub(alignment={("hawkes", 3, 0): [0.1, 0.2], ("recency", 3, 0): [0.2, 0.2]},
               copies={("hawkes", 3, 0): 0.5, ("recency", 3, 0): 0.5})
    text = headline(comparison_rows(one))
    assert "(one run: no interval)" in text and "no claim either way" in text and "one run: no claim" in text
