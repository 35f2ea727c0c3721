"""How large a gap between two policies a few dozen questions can resolve: the standard error and Wilson
half-width of one accuracy, and the smallest gap McNemar's exact test on the same questions can call real.

For n questions of which d are discordant (right under exactly one policy), split a : d − a, the gap is
(2a − d) / n; it is significant when McNemar's exact two-sided p-value is below 1 − level.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..table import Table

__all__ = ["sample_size_table", "smallest_significant_gap"]




def smallest_significant_gap(n: int, discordant: int | None = None, level: float = 0.95) -> float:
    """The smallest accuracy gap (a fraction) between two policies on the same ``n`` questions that McNemar's
    exact test calls real at ``level``, when ``discordant`` questions are right under exactly one policy
    (default: all of them split as unevenly as possible — the best case). NaN when no split can be significant
    (too few discordant questions)."""
    from statsmodels.stats.contingency_tables import mcnemar

    if not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    alpha = 1.0 - level
    ds = range(1, n + 1) if discordant is None else [discordant]
    if discordant is not None and not 0 <= discordant <= n:
        raise ValueError(f"discordant must be in [0, n], got {discordant!r}")
    best = math.nan
    for d in ds:
        for a in range((d + 1) // 2, d + 1):  # a right only under one policy, d - a only under the other
            p = mcnemar([[0, a], [d - a, 0]], exact=True).pvalue
            if p < alpha:
                gap = (2 * a - d) / n
                best = gap if math.isnan(best) else min(best, gap)
                break
        if discordant is None and not math.isnan(best):
            # the first d with a significant split is d = a (all one way); a larger d needs a lopsided split
            # whose gap 2a - d is at least as large (about 2·sqrt(d)), so the search can stop here
            return best
    return best


def sample_size_table(ns: Sequence[int] = (6, 40, 50, 100, 400), *, accuracy: float = 0.5,
                      discordant_share: float = 0.3, level: float = 0.95) -> Table:
    """For each number of questions n: the standard error of one accuracy near ``accuracy`` and its 95%
    Wilson half-width (points), the smallest gap McNemar could ever call real (every discordant question
    favouring one policy), and the gap it needs when ``discordant_share`` of the questions are discordant
    (a realistic split) — all in percentage points."""
    from ..semantic.evaluation import accuracy_ci

    rows = []
    for n in ns:
        k = int(round(accuracy * n))
        ci = accuracy_ci(np.arange(n) < k, level=level)
        d = max(1, int(round(discordant_share * n)))
        best = smallest_significant_gap(n, level=level)
        typical = smallest_significant_gap(n, d, level=level)
        rows.append({"questions": n, "SE of one accuracy (pts)": round(100 * math.sqrt(accuracy * (1 - accuracy) / n), 1),
                     "Wilson ± (pts)": round(100 * (ci.high - ci.low) / 2, 1),
                     "smallest real gap, best case (pts)": "impossible" if math.isnan(best) else round(100 * best, 1),
                     f"gap needed, {discordant_share:.0%} discordant (pts)":
                         "impossible" if math.isnan(typical) else round(100 * typical, 1)})
    return Table(rows, title=f"what n questions can resolve (accuracy near {accuracy:.0%}, {level:.0%} level)")
