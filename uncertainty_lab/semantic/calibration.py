"""Calibration: does a confidence of 0.8 mean right 80% of the time? ECE, reliability diagrams, and two
calibrators that learn a map score → P(correct) on held-out data (isotonic, Platt).

Same convention as :mod:`.evaluation`: ``confidence`` in [0, 1], higher = more likely correct;
``correct`` boolean-like. Fit a calibrator on one split and measure ECE on another, or the ECE flatters.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit

from .evaluation import as_labels, as_scores, check_same_shape

__all__ = ["CalibrationBins", "IsotonicCalibrator", "PlattCalibrator", "calibration_bins", "ece",
           "pool_adjacent_violators", "reliability_diagram"]

STRATEGIES = ("equal_width", "equal_mass")


def _probabilities_and_labels(confidence, correct):
    c = as_scores(confidence, "confidence")
    y = as_labels(correct, "correct")
    check_same_shape(confidence=c, correct=y)
    if c.ndim != 1:
        raise ValueError(f"confidence must be 1-D, got shape {c.shape}")
    if (c < 0).any() or (c > 1).any():
        raise ValueError(f"confidence must lie in [0, 1] for calibration (found {c[(c < 0) | (c > 1)][0]:g}); "
                         "map a score to [0, 1] first, e.g. with PlattCalibrator")
    return c, y


@dataclass(frozen=True)
class CalibrationBins:
    """Per bin: its interval [low, high], the number of answers, their mean confidence and accuracy
    (NaN for an empty bin)."""

    low: np.ndarray
    high: np.ndarray
    count: np.ndarray
    confidence: np.ndarray
    accuracy: np.ndarray
    strategy: str

    @property
    def gap(self) -> np.ndarray:
        """accuracy − confidence per bin: negative = over-confident."""
        return self.accuracy - self.confidence


def calibration_bins(confidence, correct, *, n_bins: int = 10, strategy: str = "equal_width") -> CalibrationBins:
    """Bin the answers by confidence. ``equal_width``: bin b with b/B ≤ c < (b+1)/B (the last bin closed),
    compared with the edges k/B themselves — ⌊c·B⌋ in floating point puts c = k/B one bin low for some B
    (15/22 · 22 = 14.999…). ``equal_mass``: the answer of rank r (by confidence) goes to bin ⌊r·B/n⌋, so bins differ in
    size by at most one; tied confidences may straddle two bins."""
    c, y = _probabilities_and_labels(confidence, correct)
    if not isinstance(n_bins, int) or isinstance(n_bins, bool) or n_bins < 1:
        raise ValueError(f"n_bins must be a positive integer, got {n_bins!r}")
    if strategy == "equal_width":
        edges = np.arange(n_bins + 1) / n_bins
        which = np.clip(np.searchsorted(edges, c, side="right") - 1, 0, n_bins - 1)
    elif strategy == "equal_mass":
        which = np.empty(c.size, dtype=int)
        which[np.argsort(c, kind="stable")] = np.arange(c.size) * n_bins // c.size
    else:
        raise ValueError(f"strategy must be one of {STRATEGIES}, got {strategy!r}")
    count = np.bincount(which, minlength=n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_c = np.bincount(which, weights=c, minlength=n_bins) / count
        acc = np.bincount(which, weights=y.astype(float), minlength=n_bins) / count
    if strategy == "equal_width":
        low, high = np.arange(n_bins) / n_bins, np.arange(1, n_bins + 1) / n_bins
    else:
        low, high = np.full(n_bins, np.inf), np.full(n_bins, -np.inf)
        np.minimum.at(low, which, c)
        np.maximum.at(high, which, c)
        low[count == 0] = high[count == 0] = np.nan
    return CalibrationBins(low, high, count, mean_c, acc, strategy)


def ece(confidence, correct, *, n_bins: int = 10, strategy: str = "equal_width") -> float:
    """ECE = Σ_b (n_b / n) · |acc_b − conf_b| over the non-empty bins."""
    bins = calibration_bins(confidence, correct, n_bins=n_bins, strategy=strategy)
    filled = bins.count > 0
    weights = bins.count[filled] / bins.count.sum()
    return float(np.sum(weights * np.abs(bins.gap[filled])))


def reliability_diagram(confidence, correct, *, n_bins: int = 10, strategy: str = "equal_width", ax=None,
                        title: str | None = None):
    """Bin accuracy against bin confidence (bars over each bin, dots at the mean confidence), the
    diagonal of perfect calibration, each bin's count, and the ECE in the title. The limits are padded so a dot
    at accuracy 0 or 1 and its count show whole; the legend sits under the axes. Returns the Figure."""
    import matplotlib.pyplot as plt

    bins = calibration_bins(confidence, correct, n_bins=n_bins, strategy=strategy)
    if ax is None:
        fig, ax = plt.subplots(figsize=(5, 5.6), layout="constrained")
    else:
        fig = ax.figure
    filled = bins.count > 0
    width = np.where(filled, np.maximum(bins.high - bins.low, 0.01), 0.0)
    ax.bar(np.nan_to_num(bins.low[filled]), bins.accuracy[filled], width=width[filled], align="edge",
           alpha=0.35, edgecolor="C0", label="accuracy in bin")
    ax.plot(bins.confidence[filled], bins.accuracy[filled], "o", color="C0", label="at mean confidence")
    ax.plot([0, 1], [0, 1], "--", color="grey", label="perfect calibration")
    for x, acc, k in zip(bins.confidence[filled], bins.accuracy[filled], bins.count[filled], strict=True):
        ax.annotate(f"n={k}", (x, acc), textcoords="offset points", xytext=(0, 6), ha="center", fontsize=8)
    ax.set(xlim=(-0.05, 1.05), ylim=(-0.05, 1.12), xlabel="confidence", ylabel="accuracy", aspect="equal")
    value = ece(confidence, correct, n_bins=n_bins, strategy=strategy)
    ax.set_title(title or f"Reliability ({strategy.replace('_', '-')}, {n_bins} bins): ECE = {value:.3f}")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncols=3, fontsize=8)
    return fig


def pool_adjacent_violators(y, weights=None) -> np.ndarray:
    """The non-decreasing f minimising Σ w_i (y_i − f_i)², by pooling adjacent violating blocks into their
    weighted mean (PAV)."""
    y = as_scores(y, "y")
    w = np.ones_like(y) if weights is None else as_scores(weights, "weights")
    check_same_shape(y=y, weights=w)
    if y.ndim != 1 or (w <= 0).any():
        raise ValueError("y must be 1-D and weights positive")
    values, wsum, size = [], [], []
    for yi, wi in zip(y.tolist(), w.tolist(), strict=True):
        values.append(yi)
        wsum.append(wi)
        size.append(1)
        while len(values) > 1 and values[-2] > values[-1]:
            w_new = wsum[-2] + wsum[-1]
            values[-2] = (values[-2] * wsum[-2] + values[-1] * wsum[-1]) / w_new
            wsum[-2], size[-2] = w_new, size[-2] + size[-1]
            del values[-1], wsum[-1], size[-1]
    return np.repeat(values, size)


class _Calibrator:
    def _check_fitted(self):
        if getattr(self, "_fitted", False) is False:
            raise RuntimeError(f"{type(self).__name__} is not fitted yet; call .fit(scores, correct) first")

    def _fit_inputs(self, scores, correct):
        s = as_scores(scores, "scores")
        y = as_labels(correct, "correct")
        check_same_shape(scores=s, correct=y)
        if s.ndim != 1 or not np.isfinite(s).all():
            raise ValueError("scores must be 1-D and finite")
        return s, y

    def fit_predict(self, scores, correct) -> np.ndarray:
        return self.fit(scores, correct).predict(scores)


class IsotonicCalibrator(_Calibrator):
    """P(correct | s) as a non-decreasing step function of the score (PAV on the answers sorted by score,
    tied scores pooled first); ``predict`` interpolates linearly between the fitted scores and clips
    outside them. ``higher_is_confident=False`` fits a non-increasing map (for uncertainties)."""

    def __init__(self, *, higher_is_confident: bool = True):
        self.higher_is_confident = higher_is_confident
        self._fitted = False

    def fit(self, scores, correct, sample_weight=None) -> IsotonicCalibrator:
        s, y = self._fit_inputs(scores, correct)
        w = np.ones_like(s) if sample_weight is None else as_scores(sample_weight, "sample_weight")
        check_same_shape(scores=s, sample_weight=w)
        s = s if self.higher_is_confident else -s
        xs, inverse = np.unique(s, return_inverse=True)
        wsum = np.bincount(inverse, weights=w)
        ymean = np.bincount(inverse, weights=w * y) / wsum
        self.x_, self.y_ = xs, pool_adjacent_violators(ymean, wsum)
        self._fitted = True
        return self

    def predict(self, scores) -> np.ndarray:
        """Calibrated P(correct) for each score."""
        self._check_fitted()
        s = as_scores(scores, "scores")
        return np.interp(s if self.higher_is_confident else -s, self.x_, self.y_)


class PlattCalibrator(_Calibrator):
    """P(correct | s) = σ(a·s + b), a and b by maximum likelihood (scipy L-BFGS on the standardised
    score). ``platt_targets=True`` uses Platt's smoothed targets (n₊+1)/(n₊+2) and 1/(n₋+2).

    When a threshold on the score separates right from wrong answers (completely or with ties at the boundary)
    and the targets are the 0/1 labels, no finite maximum-likelihood (a, b) exists: the slope grows without
    bound. Then ``converged_`` is False, ``separable_`` True and a warning says to use ``platt_targets=True``
    (whose smoothed targets always have a finite optimum) or more data."""

    def __init__(self, *, platt_targets: bool = False):
        self.platt_targets = platt_targets
        self._fitted = False

    def fit(self, scores, correct) -> PlattCalibrator:
        s, y = self._fit_inputs(scores, correct)
        n_pos = int(y.sum())
        if n_pos in (0, y.size):
            raise ValueError("correct has only one class; Platt scaling needs both right and wrong answers")
        t = y.astype(float)
        if self.platt_targets:
            t = np.where(y, (n_pos + 1) / (n_pos + 2), 1 / (y.size - n_pos + 2))
        mu, sd = s.mean(), s.std() or 1.0
        z = (s - mu) / sd

        def loss(theta):
            logits = theta[0] * z + theta[1]
            r = expit(logits) - t
            return np.sum(np.logaddexp(0.0, logits) - t * logits), np.array([r @ z, r.sum()])

        res = minimize(loss, np.zeros(2), jac=True, method="L-BFGS-B", options={"gtol": 1e-10, "maxiter": 1000})
        self.a_, self.b_ = float(res.x[0] / sd), float(res.x[1] - res.x[0] * mu / sd)
        right, wrong = s[y], s[~y]
        self.separable_ = not self.platt_targets and (wrong.max() <= right.min() or right.max() <= wrong.min())
        self.converged_ = bool(res.success) and not self.separable_
        if self.separable_:
            warnings.warn("PlattCalibrator: the scores separate right from wrong answers, so no finite maximum-"
                          "likelihood fit exists (the slope diverges); the fitted (a, b) is where the optimiser "
                          "stopped. Use platt_targets=True or more data.", RuntimeWarning, stacklevel=2)
        self._fitted = True
        return self

    def predict(self, scores) -> np.ndarray:
        """Calibrated P(correct) for each score."""
        self._check_fitted()
        return expit(self.a_ * as_scores(scores, "scores") + self.b_)
