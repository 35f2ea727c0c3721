"""Evaluating uncertainty: selective-prediction metrics, bootstrap intervals and paired tests.

**Convention.** Every metric here reads a *confidence*: higher means the answer is more likely
correct. A metric result's ``confidence`` goes in as is; an *uncertainty* (semantic entropy, …) goes in
with ``higher_is_confident=False``, which negates it. ``correct`` is boolean-like (bool or 0/1).
AUROC of confidence for predicting "correct" equals AUROC of uncertainty for flagging "wrong" (the
HASSUM tables' framing): the pairs are the same.

Ranking metrics also accept 2-D arrays, one resample per row, and then return one value per row; that
is what makes :func:`bootstrap_ci` fast. Undefined values (one class only) are NaN, never a guess.
Calibration (ECE, reliability diagram, calibrators) is in :mod:`.calibration`; grading an answer
against gold aliases in :mod:`.correctness`; a number to print, with its class counts and interval (or the
reason none is given), in :mod:`.discrimination`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy.stats import rankdata

__all__ = [
    "BootstrapCI", "PairedComparison", "ProportionCI", "RejectionCurve", "accuracy", "accuracy_ci", "auprc",
    "aurac", "aurc", "auroc", "bootstrap_ci", "newcombe_paired_ci", "paired_comparison", "prr", "rejection_curve",
    "risk_coverage_curve",
]

# ---------------------------------------------------------------- input checks


def as_labels(x, name: str) -> np.ndarray:
    """``x`` as a bool array (1-D, or 2-D with one resample per row); 0/1 numbers are accepted."""
    arr = np.asarray(x)
    if arr.dtype == object:
        if any(v is None for v in arr.ravel()):
            raise ValueError(f"{name} contains None (an unjudged answer?); drop those items or grade them first")
        arr = np.asarray(arr.tolist())
    if arr.ndim not in (1, 2) or arr.shape[-1] == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array of booleans, got shape {arr.shape}")
    if arr.dtype.kind == "b":
        return arr
    if arr.dtype.kind not in "iuf":
        raise ValueError(f"{name} must be boolean-like (bool or 0/1), got dtype {arr.dtype}")
    if arr.dtype.kind == "f" and np.isnan(arr).any():
        raise ValueError(f"{name} contains NaN at index {int(np.flatnonzero(np.isnan(arr.ravel()))[0])}; "
                         "a missing label is not a wrong answer: drop the item explicitly")
    if not np.isin(arr, (0, 1)).all():
        bad = arr.ravel()[~np.isin(arr.ravel(), (0, 1))][0].item()
        raise ValueError(f"{name} must be boolean-like (0/1), found the value {bad!r}")
    return arr.astype(bool)


def as_scores(x, name: str) -> np.ndarray:
    """``x`` as a float array (1-D or 2-D) with no NaN; ±inf is allowed (ranking only needs order)."""
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be numbers (one score per answer), got {x!r:.80}") from None
    if arr.ndim not in (1, 2) or arr.shape[-1] == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array of numbers, got shape {arr.shape}")
    if np.isnan(arr).any():
        raise ValueError(f"{name} contains NaN at index {int(np.flatnonzero(np.isnan(arr.ravel()))[0])}; "
                         "missing is not confident: drop those items (and say how many) before scoring")
    return arr


def check_same_shape(**arrays: np.ndarray) -> None:
    """Raise naming the arguments when the arrays do not have the same shape."""
    shapes = {k: np.shape(v) for k, v in arrays.items()}
    if len(set(shapes.values())) > 1:
        listed = ", ".join(f"{k} {s}" for k, s in shapes.items())
        raise ValueError(f"{' and '.join(shapes)} must have the same length (one entry per question); got {listed}")


def _inputs(confidence, correct, higher_is_confident: bool):
    s = as_scores(confidence, "confidence")
    y = as_labels(correct, "correct")
    check_same_shape(confidence=s, correct=y)
    if not isinstance(higher_is_confident, bool):
        raise ValueError(f"higher_is_confident must be True or False, got {higher_is_confident!r}")
    s = s if higher_is_confident else -s
    return np.atleast_2d(s), np.atleast_2d(y), s.ndim == 1


def _out(values: np.ndarray, single: bool):
    return float(values[0]) if single else values


def _batched(fn: Callable) -> Callable:
    """Mark a metric that accepts one resample per row (``bootstrap_ci`` then calls it once)."""
    fn.supports_batches = True
    return fn


# ---------------------------------------------------------------- selective prediction


@_batched
def accuracy(correct) -> float | np.ndarray:
    """Accuracy = (1/n) Σ correct_i."""
    y = as_labels(correct, "correct")
    return float(y.mean()) if y.ndim == 1 else y.mean(axis=-1)


@_batched
def auroc(confidence, correct, *, higher_is_confident: bool = True) -> float | np.ndarray:
    """AUROC = P(c_right > c_wrong) + ½ P(tie) = (R₊ − n₊(n₊+1)/2) / (n₊ n₋), R₊ the average-rank sum of
    the correct answers (Mann–Whitney U); NaN when all answers are right or all wrong."""
    s, y, single = _inputs(confidence, correct, higher_is_confident)
    ranks = rankdata(s, method="average", axis=-1)
    n_pos = y.sum(axis=-1)
    n_neg = y.shape[-1] - n_pos
    u = (ranks * y).sum(axis=-1) - n_pos * (n_pos + 1) / 2.0
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where((n_pos > 0) & (n_neg > 0), u / (n_pos * n_neg), np.nan)
    return _out(out, single)


def _sorted_desc(s: np.ndarray, y: np.ndarray):
    """Rows sorted by descending score, plus each position's tie-group start and end index."""
    order = np.argsort(-s, axis=-1, kind="stable")
    s_sorted = np.take_along_axis(s, order, axis=-1)
    y_sorted = np.take_along_axis(y, order, axis=-1).astype(float)
    n = s.shape[-1]
    pos = np.broadcast_to(np.arange(n), s.shape)
    new = np.ones(s.shape, dtype=bool)
    new[:, 1:] = s_sorted[:, 1:] != s_sorted[:, :-1]
    last = np.ones(s.shape, dtype=bool)
    last[:, :-1] = new[:, 1:]
    start = np.maximum.accumulate(np.where(new, pos, 0), axis=-1)
    end = np.minimum.accumulate(np.where(last, pos, n - 1)[:, ::-1], axis=-1)[:, ::-1]
    return y_sorted, start, end


@_batched
def auprc(confidence, correct, *, higher_is_confident: bool = True, positive: str = "correct") -> float | np.ndarray:
    """Average precision AP = Σ_t (R_t − R_{t−1}) P_t over distinct confidence thresholds t (step-wise, no
    interpolation; tied scores enter together). ``positive="wrong"`` scores wrong-answer detection by
    the uncertainty instead. NaN when there is no positive."""
    if positive not in ("correct", "wrong"):
        raise ValueError(f"positive must be 'correct' or 'wrong', got {positive!r}")
    s, y, single = _inputs(confidence, correct, higher_is_confident)
    if positive == "wrong":
        s, y = -s, ~y
    y_sorted, _, end = _sorted_desc(s, y)
    n = y.shape[-1]
    tp = np.cumsum(y_sorted, axis=-1)
    precision_at_end = np.take_along_axis(tp / np.arange(1, n + 1), end, axis=-1)
    n_pos = y.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(n_pos > 0, (y_sorted * precision_at_end).sum(axis=-1) / n_pos, np.nan)
    return _out(out, single)


def _retained_accuracy(s: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Row-wise accuracy of the k most confident answers, k = 1..n; ties are broken at random in
    expectation (each tied answer counts as its tie group's mean correctness)."""
    y_sorted, start, end = _sorted_desc(s, y)
    n = y.shape[-1]
    csum = np.concatenate([np.zeros((y.shape[0], 1)), np.cumsum(y_sorted, axis=-1)], axis=-1)
    group_mean = (np.take_along_axis(csum, end + 1, axis=-1) - np.take_along_axis(csum, start, axis=-1)) / (
        end - start + 1)
    return np.cumsum(group_mean, axis=-1) / np.arange(1, n + 1)


@dataclass(frozen=True)
class RejectionCurve:
    """Accuracy of the answers kept as the least confident are rejected one by one. ``coverage`` runs
    1, (n−1)/n, …, 1/n; ``accuracy[i]`` is the accuracy of the answers kept at ``coverage[i]``."""

    coverage: np.ndarray
    accuracy: np.ndarray

    @property
    def risk(self) -> np.ndarray:
        """Selective risk = 1 − accuracy of the kept answers."""
        return 1.0 - self.accuracy

    @property
    def area(self) -> float:
        """AURAC = mean accuracy over the n coverages."""
        return float(self.accuracy.mean())


def rejection_curve(confidence, correct, *, higher_is_confident: bool = True) -> RejectionCurve:
    """acc(k/n) = (1/k) Σ_{i ≤ k} correct_(i), answers ordered by decreasing confidence, k = n..1."""
    s, y, single = _inputs(confidence, correct, higher_is_confident)
    if not single:
        raise ValueError("rejection_curve takes 1-D confidence and correct (one question per entry)")
    acc = _retained_accuracy(s, y)[0][::-1]
    n = acc.size
    return RejectionCurve(coverage=np.arange(n, 0, -1) / n, accuracy=acc)


def risk_coverage_curve(confidence, correct, *, higher_is_confident: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(coverage, risk) with risk(k/n) = 1 − acc(k/n): the error rate among the k most confident answers."""
    curve = rejection_curve(confidence, correct, higher_is_confident=higher_is_confident)
    return curve.coverage, curve.risk


@_batched
def aurac(confidence, correct, *, higher_is_confident: bool = True) -> float | np.ndarray:
    """AURAC = (1/n) Σ_{k=1}^{n} acc(k/n): area under the rejection-accuracy curve (higher is better)."""
    s, y, single = _inputs(confidence, correct, higher_is_confident)
    return _out(_retained_accuracy(s, y).mean(axis=-1), single)


@_batched
def aurc(confidence, correct, *, higher_is_confident: bool = True) -> float | np.ndarray:
    """AURC = (1/n) Σ_k risk(k/n) = 1 − AURAC: area under the risk–coverage curve (lower is better)."""
    return 1.0 - aurac(confidence, correct, higher_is_confident=higher_is_confident)


@_batched
def prr(confidence, correct, *, higher_is_confident: bool = True) -> float | np.ndarray:
    """PRR = (AURAC − AURAC_random) / (AURAC_oracle − AURAC_random), with AURAC_random = accuracy and the
    oracle keeping right answers first: 1 = oracle order, 0 = no better than random (a constant
    confidence gives exactly 0), negative = worse than random; NaN when all answers are right or all wrong."""
    s, y, single = _inputs(confidence, correct, higher_is_confident)
    area = _retained_accuracy(s, y).mean(axis=-1)
    n = y.shape[-1]
    k = np.arange(1, n + 1)
    n_right = y.sum(axis=-1, keepdims=True)
    oracle = (np.minimum(k, n_right) / k).mean(axis=-1)
    random = y.mean(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(np.isclose(oracle, random, rtol=0, atol=1e-12), np.nan, (area - random) / (oracle - random))
    return _out(out, single)


# ---------------------------------------------------------------- intervals


@dataclass(frozen=True)
class BootstrapCI:
    """A bootstrap interval. ``n_skipped`` resamples gave an undefined (non-finite) value, e.g. one class
    only for AUROC, and were left out; the interval is conditional on the rest."""

    estimate: float
    low: float
    high: float
    level: float
    method: str
    n_boot: int
    n_skipped: int
    replicates: np.ndarray = field(repr=False)

    def __str__(self) -> str:
        skipped = f"; {self.n_skipped} undefined resamples skipped" if self.n_skipped else ""
        return (f"{self.estimate:.3f} [{self.low:.3f}, {self.high:.3f}] "
                f"({self.level:.0%} {self.method} bootstrap, {self.n_boot} resamples{skipped})")


def _supports_batches(fn) -> bool:
    while isinstance(fn, functools.partial):
        fn = fn.func
    return bool(getattr(fn, "supports_batches", False))


def _check_level(level) -> float:
    if not 0.0 < float(level) < 1.0:
        raise ValueError(f"level must be in (0, 1), e.g. 0.95, got {level!r}")
    return float(level)


def bootstrap_ci(metric_fn: Callable, *arrays, n_boot: int = 1000, level: float = 0.95,
                 seed: int | np.random.Generator = 0, method: str = "percentile",
                 vectorised: bool | None = None) -> BootstrapCI:
    """Resample the items (rows of every array together) with replacement n_boot times; percentile CI =
    [q_{α/2}, q_{1−α/2}] of the replicates, basic CI = [2θ̂ − q_{1−α/2}, 2θ̂ − q_{α/2}], α = 1 − level.

    ``metric_fn(*arrays) -> float``. A metric marked ``supports_batches`` (``auroc``, ``auprc``, ``aurac``,
    ``aurc``, ``prr``, ``accuracy``, also through ``functools.partial``) gets all resamples at once;
    ``vectorised`` forces the choice. Non-finite replicates are skipped and counted, so a metric should
    return NaN (not raise) where it is undefined, as the ones here do."""
    if method not in ("percentile", "basic"):
        raise ValueError(f"method must be 'percentile' or 'basic', got {method!r}")
    level = _check_level(level)
    if not isinstance(n_boot, int) or n_boot < 1:
        raise ValueError(f"n_boot must be a positive integer, got {n_boot!r}")
    if not arrays:
        raise ValueError("pass the data arrays after metric_fn, e.g. bootstrap_ci(auroc, confidence, correct)")
    arrays = tuple(np.asarray(a) for a in arrays)
    n = len(arrays[0])
    for i, a in enumerate(arrays):
        if a.ndim == 0 or len(a) != n:
            raise ValueError(f"arrays[{i}] has length {len(a) if a.ndim else 'scalar'}, arrays[0] has {n}; "
                             "every array needs one entry per item")
    if n == 0:
        raise ValueError("the arrays are empty; there is nothing to resample")
    rng = np.random.default_rng(seed)
    estimate = float(metric_fn(*arrays))
    idx = rng.integers(0, n, size=(n_boot, n))
    if vectorised is None:
        vectorised = _supports_batches(metric_fn)
    if vectorised:
        step = max(1, 2_000_000 // n)  # bound memory: about 2M resampled entries per call
        reps = np.concatenate([np.asarray(metric_fn(*(a[idx[i:i + step]] for a in arrays)), dtype=float).reshape(-1)
                               for i in range(0, n_boot, step)])
        if reps.shape != (n_boot,):
            raise ValueError(f"metric_fn returned {reps.size} values for {n_boot} resamples; pass vectorised=False")
    else:
        reps = np.array([float(metric_fn(*(a[row] for a in arrays))) for row in idx])
    finite = reps[np.isfinite(reps)]
    alpha = 1.0 - level
    if finite.size == 0 or not np.isfinite(estimate):
        low = high = np.nan
    else:
        q_lo, q_hi = np.quantile(finite, [alpha / 2, 1 - alpha / 2])
        low, high = (q_lo, q_hi) if method == "percentile" else (2 * estimate - q_hi, 2 * estimate - q_lo)
    return BootstrapCI(estimate, float(low), float(high), level, method, n_boot, int(n_boot - finite.size), reps)


@dataclass(frozen=True)
class ProportionCI:
    """A proportion with its confidence interval."""

    successes: int
    n: int
    estimate: float
    low: float
    high: float
    level: float
    method: str

    def __str__(self) -> str:
        return (f"{self.estimate:.1%} [{self.low:.1%}, {self.high:.1%}] "
                f"({self.successes}/{self.n}, {self.method} {self.level:.0%})")


def accuracy_ci(correct, *, level: float = 0.95, method: str = "wilson") -> ProportionCI:
    """Wilson score interval (p̂ + z²/2n ± z√(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n) via statsmodels'
    ``proportion_confint``; any of its other methods by name."""
    from statsmodels.stats.proportion import proportion_confint

    y = as_labels(correct, "correct")
    if y.ndim != 1:
        raise ValueError(f"correct must be 1-D, got shape {y.shape}")
    level = _check_level(level)
    k, n = int(y.sum()), int(y.size)
    low, high = proportion_confint(k, n, alpha=1 - level, method=method)
    return ProportionCI(k, n, k / n, float(low), float(high), level, method.capitalize())


# ---------------------------------------------------------------- paired comparison


@dataclass(frozen=True)
class PairedComparison:
    """Two policies graded on the same questions. ``difference`` = accuracy_a − accuracy_b; ``se`` its
    standard error √(((b+c)/n − ((b−c)/n)²)/n); ``p_value`` from McNemar's test on the discordant pairs."""

    names: tuple[str, str]
    n: int
    only_a: int
    only_b: int
    both: int
    neither: int
    accuracy_a: float
    accuracy_b: float
    difference: float
    ci_low: float
    ci_high: float
    se: float
    p_value: float
    test: str
    level: float
    ci_method: str
    verdict: str

    @property
    def significant(self) -> bool:
        """p < 1 − level."""
        return bool(self.p_value < 1.0 - self.level)

    @property
    def table(self) -> np.ndarray:
        """[[both, only A], [only B, neither]]: rows A right/wrong, columns B right/wrong."""
        return np.array([[self.both, self.only_a], [self.only_b, self.neither]])

    def __str__(self) -> str:
        return self.verdict


@_batched
def _mean(x: np.ndarray) -> float | np.ndarray:
    """Mean along the last axis (the paired difference a_i − b_i)."""
    return float(x.mean()) if x.ndim == 1 else x.mean(axis=-1)


def _points(x: float) -> str:
    p = 100 * abs(x)
    return f"{p:.0f}" if abs(p - round(p)) < 0.05 else f"{p:.1f}"


def newcombe_paired_ci(both: int, only_a: int, only_b: int, neither: int, *, level: float = 0.95) -> tuple[float, float]:
    """Newcombe's (1998, method 10) square-and-add interval for p_A − p_B on paired data: D − √(dl₁² − 2φ dl₁ du₂ +
    du₂²), D + √(du₁² − 2φ du₁ dl₂ + dl₂²) from the Wilson intervals of p_A and p_B, with φ the
    (continuity-adjusted) correlation of the pairs."""
    from statsmodels.stats.proportion import proportion_confint

    level = _check_level(level)
    n = both + only_a + only_b + neither
    p1, p2 = (both + only_a) / n, (both + only_b) / n
    l1, u1 = proportion_confint(both + only_a, n, alpha=1 - level, method="wilson")
    l2, u2 = proportion_confint(both + only_b, n, alpha=1 - level, method="wilson")
    margins = (both + only_a) * (only_b + neither) * (both + only_b) * (only_a + neither)
    cross = both * neither - only_a * only_b
    phi = 0.0
    if margins > 0 and (cross > n / 2 or cross < 0):
        phi = (cross - n / 2 if cross > n / 2 else cross) / np.sqrt(margins)
    d = p1 - p2
    low = d - np.sqrt(max((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2, 0.0))
    high = d + np.sqrt(max((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2, 0.0))
    return float(low), float(high)


def _mcnemar_p(both: int, only_a: int, only_b: int, neither: int, *, exact: bool) -> float:
    """McNemar's p-value on the discordant pairs b = ``only_a``, c = ``only_b``: exact binomial, or χ² =
    (|b − c| − 1)² / (b + c) with 1 degree of freedom. With no discordant pair there is no evidence either way
    (p = 1); with b = c the continuity correction is not applied (χ² = 0, p = 1), as R's ``mcnemar.test`` does —
    statsmodels' corrected χ² divides by zero at b + c = 0 and gives χ² = 1/(b + c) > 0 at b = c."""
    from scipy.stats import chi2
    from statsmodels.stats.contingency_tables import mcnemar

    if only_a + only_b == 0:
        return 1.0
    if exact:
        return float(mcnemar([[both, only_a], [only_b, neither]], exact=True).pvalue)
    if only_a == only_b:
        return 1.0
    return float(chi2.sf((abs(only_a - only_b) - 1) ** 2 / (only_a + only_b), df=1))


def paired_comparison(correct_a, correct_b, *, names: tuple[str, str] = ("A", "B"), level: float = 0.95,
                      exact: bool = True, ci: str = "newcombe", n_boot: int = 2000,
                      seed: int | np.random.Generator = 0) -> PairedComparison:
    """Counts (only A, only B, both, neither), the accuracy difference A − B with a CI (``ci="newcombe"``,
    closed form, or ``"bootstrap"``: paired percentile bootstrap with ``n_boot`` and ``seed``), McNemar's
    test (exact binomial on the discordant pairs, or χ² with continuity correction when ``exact=False``)
    and a plain-language verdict on whether the difference is real at ``level``."""
    a = as_labels(correct_a, "correct_a")
    b = as_labels(correct_b, "correct_b")
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(f"correct_a and correct_b must be 1-D, got shapes {a.shape} and {b.shape}")
    check_same_shape(correct_a=a, correct_b=b)
    level = _check_level(level)
    if len(names) != 2 or not all(isinstance(x, str) for x in names):
        raise ValueError(f"names must be two strings (policy A, policy B), got {names!r}")
    n = a.size
    only_a, only_b = int((a & ~b).sum()), int((~a & b).sum())
    both, neither = int((a & b).sum()), int((~a & ~b).sum())
    diff = (only_a - only_b) / n
    se = float(np.sqrt(max((only_a + only_b) / n - diff**2, 0.0) / n))
    p = _mcnemar_p(both, only_a, only_b, neither, exact=exact)
    if ci == "newcombe":
        lo, hi = newcombe_paired_ci(both, only_a, only_b, neither, level=level)
    elif ci == "bootstrap":
        boot = bootstrap_ci(_mean, a.astype(float) - b.astype(float), n_boot=n_boot, level=level, seed=seed)
        lo, hi = boot.low, boot.high
    else:
        raise ValueError(f"ci must be 'newcombe' or 'bootstrap', got {ci!r}")
    test = "McNemar exact" if exact else "McNemar χ²"
    acc_a, acc_b = float(a.mean()), float(b.mean())
    na, nb = names
    scores = f"{na} {acc_a:.0%} vs {nb} {acc_b:.0%}, n = {n}; {only_a} right only for {na}, {only_b} only for {nb}"
    interval = f"{level:.0%} {ci.capitalize()} CI of {na} − {nb}: [{100 * lo:+.1f}, {100 * hi:+.1f}] points"
    if only_a + only_b == 0:
        verdict = f"no difference: {na} and {nb} are right on exactly the same questions ({scores})"
    else:
        if se > 0:
            gap = f"the {_points(diff)}-point gap is about {abs(diff) / se:.1f} standard errors"
        else:
            gap = f"the {_points(diff)}-point gap has a zero estimated standard error (every question went the same way)"
        excludes_zero = lo > 0 or hi < 0
        if p < 1 - level:
            ahead = na if diff > 0 else nb
            verdict = f"real difference at the {level:.0%} level: {ahead} is ahead; {test} p = {p:.2g}; {gap} ({scores}); {interval}"
        else:
            verdict = f"within noise: {test} p = {p:.2g}; {gap} ({scores}); {interval}"
        if excludes_zero != (p < 1 - level):
            verdict += (f". Borderline: the interval {'excludes' if excludes_zero else 'includes'} 0 while the test "
                        f"{'does not reject' if excludes_zero else 'rejects'}; more questions would settle it")
    return PairedComparison((na, nb), n, only_a, only_b, both, neither, acc_a, acc_b, diff, lo, hi, se, p, test,
                            level, ci, verdict)
