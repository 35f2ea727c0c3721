"""Agreement of a grader with hand labels drawn by a stratified sample, and a grader-corrected accuracy.

Every estimate takes ``weights``: an answer's design weight, the share of the population it stands for. With a
sample stratified by stratum h (population total M_h, labelled answers L_h), :func:`stratum_weights` gives answer
i of stratum h the weight w_i = M_h · m_i / Σ_{j∈L_h} m_j (m_i: how many population answers it is, 1 by default),
so the weighted sums are estimates of population sums.

- **Cohen's κ** (:func:`cohen_kappa`, the package's one κ) = (p_o − p_e) / (1 − p_e), with p_o = Σ_i w_i [h_i = g_i] /
  Σ w and p_e = Σ_k p_hand(k) · p_grader(k) over the label set (weighted shares; a grader label outside the set, e.g.
  ``unjudged``, is a disagreement and in no p_grader(k)); NaN when p_e = 1.
- **Sensitivity / specificity** (:func:`sensitivity_specificity`) of "graded correct" for "truly correct":
  Se = Σ w·t·g / Σ w·t, Sp = Σ w·(1−t)(1−g) / Σ w·(1−t).
- **Rogan–Gladen** (:func:`rogan_gladen`): the true accuracy from the observed one, p = (p_obs + Sp − 1) / (Se + Sp − 1),
  clipped to [0, 1]; undefined (NaN) when Se + Sp ≤ 1 (a grader no better than a coin).
- **Intervals**: a percentile bootstrap, stratified: each resample redraws L_h answers with replacement within each
  stratum h (the weights keep their M_h), and, for the corrected accuracy, the run's n graded answers with
  replacement (p_obs* ~ Binomial(n, p_obs)/n), the two treated as independent samples. Replicates where a value is
  undefined are dropped and counted.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .correctness import LABELS

__all__ = ["CorrectedAccuracy", "Interval", "cohen_kappa", "corrected_accuracy", "kappa_from_confusion",
           "kappa_interval", "rogan_gladen", "sensitivity_specificity", "stratified_counts", "stratum_weights",
           "weighted_confusion"]

METHOD = "stratified percentile bootstrap"


@dataclass(frozen=True)
class Interval:
    """An estimate with its interval: ``low``/``high`` at ``level`` by ``method``, from ``n_boot`` replicates
    (``dropped``: undefined ones left out)."""

    estimate: float
    low: float
    high: float
    level: float
    method: str = METHOD
    n_boot: int = 0
    dropped: int = 0

    def __str__(self) -> str:
        if not math.isfinite(self.estimate):
            return "undefined"
        return f"{self.estimate:.3f} [{self.low:.3f}, {self.high:.3f}]"


def _codes(values: Sequence[str], labels: Sequence[str]) -> np.ndarray:
    """Label codes 0..K−1; anything outside ``labels`` is K (a disagreement, in no marginal)."""
    index = {k: i for i, k in enumerate(labels)}
    return np.array([index.get(v, len(labels)) for v in values], dtype=int)


def _weights(weights: Sequence[float] | None, n: int) -> np.ndarray:
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    if w.shape != (n,):
        raise ValueError(f"weights must have one value per answer ({n}), got shape {w.shape}")
    if not np.all(np.isfinite(w)) or np.any(w < 0) or not w.sum() > 0:
        raise ValueError("weights must be finite, non-negative and not all zero")
    return w


def weighted_confusion(hand: Sequence[str], graded: Sequence[str], *, labels: Sequence[str] = LABELS,
                       weights: Sequence[float] | None = None) -> np.ndarray:
    """The K × (K + 1) matrix of summed weights, rows the hand label, columns the grader's (the last column: a
    grader label outside ``labels``)."""
    if len(hand) != len(graded):
        raise ValueError(f"hand ({len(hand)}) and graded ({len(graded)}) must have the same length")
    h, g = _codes(hand, labels), _codes(graded, labels)
    if np.any(h == len(labels)):
        bad = sorted({v for v in hand if v not in labels})
        raise ValueError(f"hand labels {bad} are not among {list(labels)}")
    w = _weights(weights, len(h))
    k = len(labels)
    return np.bincount(h * (k + 1) + g, weights=w, minlength=k * (k + 1)).reshape(k, k + 1)


def kappa_from_confusion(confusion: np.ndarray) -> np.ndarray | float:
    """Cohen's κ of a K × (K + 1) weighted confusion matrix (module doc), or of a stack of them (leading axes)."""
    c = np.asarray(confusion, dtype=float)
    k = c.shape[-2]
    total = c.sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        p_o = np.trace(c[..., :, :k], axis1=-2, axis2=-1) / total
        p_e = (c.sum(axis=-1) * c[..., :, :k].sum(axis=-2)).sum(axis=-1) / total ** 2
        kappa = np.where(np.isclose(p_e, 1.0), np.nan, (p_o - p_e) / (1.0 - p_e))
    return float(kappa) if kappa.ndim == 0 else kappa


def cohen_kappa(hand: Sequence[str], graded: Sequence[str], *, labels: Sequence[str] = LABELS,
                weights: Sequence[float] | None = None) -> float:
    """Cohen's κ of ``graded`` against ``hand`` over ``labels``, weighted by ``weights`` (module doc)."""
    if not len(hand):
        raise ValueError("no answers to compare")
    return kappa_from_confusion(weighted_confusion(hand, graded, labels=labels, weights=weights))


def stratum_weights(strata: Sequence[Hashable], totals: Mapping[Hashable, float],
                    sizes: Sequence[float] | None = None) -> np.ndarray:
    """Design weights of labelled answers (module doc): stratum ``strata[i]`` has population total ``totals[h]``;
    ``sizes[i]`` (default 1) is how many population answers labelled answer i is."""
    m = np.ones(len(strata)) if sizes is None else np.asarray(sizes, dtype=float)
    missing = sorted({str(h) for h in strata if h not in totals})
    if missing:
        raise ValueError(f"strata {missing} have no population total in totals")
    labelled: dict[Hashable, float] = {}
    for h, size in zip(strata, m, strict=True):
        labelled[h] = labelled.get(h, 0.0) + float(size)
    return np.array([totals[h] * size / labelled[h] for h, size in zip(strata, m, strict=True)])


def stratified_counts(strata: Sequence[Hashable], n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """``(n_boot, n)`` counts: how often each answer is drawn when every stratum's answers are redrawn with
    replacement, as many as it has."""
    groups: dict[Hashable, list[int]] = {}
    for i, h in enumerate(strata):
        groups.setdefault(h, []).append(i)
    counts = np.zeros((n_boot, len(strata)))
    for members in groups.values():
        m = len(members)
        draws = rng.integers(0, m, size=(n_boot, m)) + np.arange(n_boot)[:, None] * m
        counts[:, members] = np.bincount(draws.ravel(), minlength=n_boot * m).reshape(n_boot, m)
    return counts


def _percentile(estimate: float, replicates: np.ndarray, level: float, n_boot: int) -> Interval:
    ok = replicates[np.isfinite(replicates)]
    if not math.isfinite(estimate) or not ok.size:
        return Interval(estimate, math.nan, math.nan, level, METHOD, n_boot, n_boot - ok.size)
    alpha = 1.0 - level
    low, high = np.quantile(ok, [alpha / 2, 1 - alpha / 2])
    return Interval(estimate, float(low), float(high), level, METHOD, n_boot, n_boot - ok.size)


def _check(level: float, n_boot: int) -> None:
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    if not isinstance(n_boot, int) or n_boot < 1:
        raise ValueError(f"n_boot must be a positive integer, got {n_boot!r}")


def kappa_interval(hand: Sequence[str], graded: Sequence[str], strata: Sequence[Hashable], *,
                   labels: Sequence[str] = LABELS, weights: Sequence[float] | None = None, level: float = 0.95,
                   n_boot: int = 2000, seed: int = 0) -> Interval:
    """Weighted Cohen's κ with its stratified percentile-bootstrap interval (module doc)."""
    _check(level, n_boot)
    estimate = cohen_kappa(hand, graded, labels=labels, weights=weights)
    k = len(labels)
    pair = _codes(hand, labels) * (k + 1) + _codes(graded, labels)
    onehot = np.zeros((len(pair), k * (k + 1)))
    onehot[np.arange(len(pair)), pair] = 1.0
    w = _weights(weights, len(pair))
    counts = stratified_counts(strata, n_boot, np.random.default_rng(seed))
    replicates = kappa_from_confusion(((counts * w) @ onehot).reshape(n_boot, k, k + 1))
    return _percentile(estimate, np.atleast_1d(replicates), level, n_boot)


def sensitivity_specificity(truth: Sequence[bool], graded: Sequence[bool],
                            weights: np.ndarray | Sequence[float] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Se and Sp of ``graded`` (graded correct) for ``truth`` (truly correct) under ``weights`` — one weight per
    answer, or a stack of them (one row per resample); NaN where a class has no weight (module doc)."""
    t = np.asarray(truth, dtype=float)
    g = np.asarray(graded, dtype=float)
    w = np.ones_like(t) if weights is None else np.asarray(weights, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        se = (w * t * g).sum(-1) / (w * t).sum(-1)
        sp = (w * (1 - t) * (1 - g)).sum(-1) / (w * (1 - t)).sum(-1)
    return se, sp


def rogan_gladen(p_obs, se, sp):
    """p = (p_obs + Sp − 1) / (Se + Sp − 1) clipped to [0, 1]; NaN where Se + Sp ≤ 1 or an input is NaN.
    Scalars or arrays (broadcast)."""
    p_obs, se, sp = (np.asarray(x, dtype=float) for x in (p_obs, se, sp))
    j = se + sp - 1.0
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(j > 0, np.clip((p_obs + sp - 1.0) / j, 0.0, 1.0), np.nan)
    return float(p) if p.ndim == 0 else p


@dataclass(frozen=True)
class CorrectedAccuracy:
    """A run's accuracy as graded (``raw``: successes / ``n``, Wilson interval ``raw_low``/``raw_high``) and corrected
    for grader error (``corrected``: Rogan–Gladen with ``se``/``sp`` from the hand labels, its interval); ``labelled``
    hand-labelled answers behind Se and Sp."""

    n: int
    successes: int
    raw: float
    raw_low: float
    raw_high: float
    se: float
    sp: float
    corrected: Interval
    labelled: int


def corrected_accuracy(run_correct: Sequence[bool], truth: Sequence[bool], graded: Sequence[bool],
                       strata: Sequence[Hashable], *, weights: Sequence[float] | None = None, level: float = 0.95,
                       n_boot: int = 2000, seed: int = 0) -> CorrectedAccuracy:
    """The Rogan–Gladen accuracy of a run whose graded answers are ``run_correct`` (p_obs = their mean, Wilson
    interval beside it), with Se and Sp from the hand-labelled answers (``truth``, ``graded``, their ``strata`` and
    design ``weights``); the interval by the stratified bootstrap of the module doc."""
    from .evaluation import accuracy_ci

    _check(level, n_boot)
    run = np.asarray(run_correct, dtype=bool)
    if run.ndim != 1 or not run.size:
        raise ValueError("run_correct must be a non-empty 1-D list of booleans (the run's graded answers)")
    if not len(truth):
        raise ValueError("no hand-labelled answers: label some before correcting the accuracy")
    w = _weights(weights, len(truth))
    raw = accuracy_ci(run, level=level)
    se, sp = sensitivity_specificity(truth, graded, w)
    rng = np.random.default_rng(seed)
    counts = stratified_counts(strata, n_boot, rng)
    se_b, sp_b = sensitivity_specificity(truth, graded, counts * w)
    p_obs_b = rng.binomial(run.size, raw.estimate, size=n_boot) / run.size
    interval = _percentile(rogan_gladen(raw.estimate, se, sp), rogan_gladen(p_obs_b, se_b, sp_b), level, n_boot)
    return CorrectedAccuracy(raw.n, raw.successes, raw.estimate, raw.low, raw.high, float(se), float(sp), interval,
                             len(truth))
