"""Every discrimination number the package prints (AUROC, AUPRC, PRR) with its evidence: n, the count of each
class, a seeded bootstrap interval — or, with too few of either class, no value and a sentence saying why.

**Classes.** The positives are the *wrong* answers (what an uncertainty should flag), the negatives the *right*
ones. The AUROC of a confidence for predicting a right answer equals the AUROC of the uncertainty for flagging a
wrong one (the same pairs), so one number serves both readings.

**Interval.** A stratified percentile bootstrap over the items: each of ``resamples`` replicates draws n₊ wrong
and n₋ right answers with replacement *within their class* (the class counts stay as observed, so no replicate
is one-class and none is skipped), and the interval is [q_{α/2}, q_{1−α/2}] of the replicates, α = 1 − level.
The replicates are generated as: ``rng = numpy.random.default_rng(seed)``; positives' indices
``rng.integers(0, n₊, (resamples, n₊))``, then negatives' ``rng.integers(0, n₋, (resamples, n₋))``.

**Minimum.** With fewer than :data:`MIN_CLASS_COUNT` of either class the number is not given: an AUROC of 1.000
from one right answer says only that one answer had the top confidence.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from .evaluation import as_labels, auprc, auroc, prr

__all__ = ["DEFAULT_LEVEL", "DEFAULT_RESAMPLES", "METHOD", "METRICS", "MIN_CLASS_COUNT", "Discrimination",
           "shortage",
           "discrimination"]

#: the least number of right answers and of wrong answers a discrimination number is given for
MIN_CLASS_COUNT = 10
#: bootstrap resamples and interval level used unless a caller says otherwise
DEFAULT_RESAMPLES = 2000
DEFAULT_LEVEL = 0.95
METHOD = "stratified percentile bootstrap"
#: metric name -> (its function of (confidence, correct), the name printed)
METRICS: dict[str, tuple[Callable, str]] = {
    "auroc": (auroc, "AUROC"),
    "auprc": (functools.partial(auprc, positive="wrong"), "AUPRC"),
    "prr": (prr, "PRR"),
}


def _answers(k: int, adjective: str, noun: str = "answer") -> str:
    return f"{k} {adjective} {noun}{'' if k == 1 else 's'}"


def _num(x: Any) -> float | None:
    return None if x is None or not math.isfinite(float(x)) else float(x)


@dataclass(frozen=True)
class Discrimination:
    """One discrimination number with its evidence. ``value``/``low``/``high`` are ``None`` when it is not given
    (``reason`` says why); ``n_pos`` counts the positives (``positive``: wrong answers), ``n_neg`` the negatives
    (``negative``: right answers), ``missing`` the items without a score (left out of n)."""

    metric: str
    value: float | None
    low: float | None
    high: float | None
    n: int
    n_pos: int
    n_neg: int
    missing: int = 0
    level: float = DEFAULT_LEVEL
    resamples: int | None = DEFAULT_RESAMPLES
    seed: int | None = 0
    method: str = METHOD
    reason: str = ""
    positive: str = "wrong"
    negative: str = "right"

    @property
    def given(self) -> bool:
        return self.value is not None

    def __float__(self) -> float:
        return math.nan if self.value is None else float(self.value)

    def counts(self) -> str:
        """``n = 90: 75 wrong answers (positives), 15 right (negatives)``, plus the missing ones."""
        miss = f"; {self.missing} without a score left out" if self.missing else ""
        return (f"n = {self.n}: {_answers(self.n_pos, self.positive)} (positives), {self.n_neg} {self.negative} "
                f"(negatives){miss}")

    def interval(self) -> str:
        """How the interval was made: ``95% stratified percentile bootstrap, 2000 resamples, seed 0``."""
        seed = "" if self.seed is None else f", seed {self.seed}"
        count = "resamples not recorded" if self.resamples is None else f"{self.resamples} resamples"
        return f"{self.level:.0%} {self.method}, {count}{seed}"

    def cell(self, fmt: str = ".3f") -> str:
        """A table cell: ``0.746 [0.622, 0.856]`` or ``not given: <reason>``; the table states the counts and
        :meth:`interval` in its columns or its note."""
        if self.value is None:
            return f"not given: {self.reason}"
        if self.low is None or self.high is None:
            return f"{self.value:{fmt}} [interval undefined]"
        return f"{self.value:{fmt}} [{self.low:{fmt}}, {self.high:{fmt}}]"

    def __str__(self) -> str:
        if self.value is None:
            return f"{self.metric} not given: {self.reason}"
        return f"{self.metric} {self.cell()} ({self.interval()}); {self.counts()}"

    def to_dict(self) -> dict[str, Any]:
        """JSON values: the number (``None`` when not given), its interval, the counts, the method and the reason."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, metric: str = "AUROC", min_class: int = MIN_CLASS_COUNT,
                  **defaults: Any) -> Discrimination:
        """Rebuild from :meth:`to_dict`, or from the older ``{n, wrong, missing, estimate, low, high}`` rows
        (``defaults`` then give ``resamples``, ``seed``, ``method``); the minimum is applied again."""
        n = int(d["n"])
        n_pos = int(d.get("n_pos", d.get("wrong", 0)))
        fields = {**defaults, **{k: d[k] for k in ("level", "resamples", "seed", "method", "positive", "negative")
                                 if k in d}}
        value = d.get("value", d.get("estimate"))
        reason = shortage(n_pos, n - n_pos, min_class, fields.get("positive", "wrong"),
                          fields.get("negative", "right")) or d.get("reason") or ""
        if reason or value is None:
            return cls(d.get("metric", metric), None, None, None, n, n_pos, n - n_pos, int(d.get("missing", 0)),
                       reason=reason or "no value was stored", **fields)
        return cls(d.get("metric", metric), _num(value), _num(d.get("low")), _num(d.get("high")), n, n_pos,
                   n - n_pos, int(d.get("missing", 0)), **fields)


def shortage(n_pos: int, n_neg: int, min_class: int = MIN_CLASS_COUNT, positive: str = "wrong",
             negative: str = "right") -> str:
    """The sentence why no number is given (``""`` when both classes have at least ``min_class``)."""
    if n_pos + n_neg == 0:
        return "no item has a score"
    if min(n_pos, n_neg) >= min_class:
        return ""
    theirs = _answers(n_pos, positive, "one")
    return f"{_answers(n_neg, negative)} and {theirs}; at least {min_class} of each are needed"


def _replicates(fn: Callable, s: np.ndarray, y: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """The stratified bootstrap replicates of ``fn`` (the scheme in the module doc), batched in rows."""
    rng = np.random.default_rng(seed)
    pos, neg = np.flatnonzero(~y), np.flatnonzero(y)
    idx = np.concatenate([pos[rng.integers(0, pos.size, (resamples, pos.size))],
                          neg[rng.integers(0, neg.size, (resamples, neg.size))]], axis=1)
    step = max(1, 2_000_000 // y.size)  # about 2M resampled entries per call
    return np.concatenate([np.asarray(fn(s[idx[i:i + step]], y[idx[i:i + step]]), dtype=float).reshape(-1)
                           for i in range(0, resamples, step)])


def discrimination(confidence, correct, *, metric: str = "auroc", higher_is_confident: bool = True,
                   resamples: int = DEFAULT_RESAMPLES, level: float = DEFAULT_LEVEL, seed: int = 0,
                   min_class: int = MIN_CLASS_COUNT) -> Discrimination:
    """``metric`` (``auroc``, ``auprc`` of the wrong answers, ``prr``) of ``confidence`` against ``correct``, over
    the items with a score (NaN = none: counted as ``missing``), with its stratified percentile
    bootstrap interval — or no value and the reason when either class has fewer than ``min_class`` items."""
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {', '.join(METRICS)}, got {metric!r}")
    if not isinstance(resamples, int) or isinstance(resamples, bool) or resamples < 1:
        raise ValueError(f"resamples must be a positive integer, e.g. {DEFAULT_RESAMPLES}, got {resamples!r}")
    if not 0.0 < float(level) < 1.0:
        raise ValueError(f"level must be in (0, 1), e.g. 0.95, got {level!r}")
    if not isinstance(min_class, int) or min_class < 1:
        raise ValueError(f"min_class must be a positive integer, e.g. {MIN_CLASS_COUNT}, got {min_class!r}")
    fn, name = METRICS[metric]
    s = np.asarray(confidence, dtype=float)
    y = as_labels(correct, "correct")
    if s.shape != y.shape or s.ndim != 1:
        raise ValueError(f"confidence and correct must be 1-D of the same length, got {s.shape} and {y.shape}")
    ok = ~np.isnan(s)  # NaN = no score (missing); ±inf still ranks
    s, y = (s[ok] if higher_is_confident else -s[ok]), y[ok]
    n_pos, n_neg = int((~y).sum()), int(y.sum())
    common = {"n": int(ok.sum()), "n_pos": n_pos, "n_neg": n_neg, "missing": int((~ok).sum()),
              "level": float(level), "resamples": resamples, "seed": seed}
    reason = shortage(n_pos, n_neg, min_class)
    if reason:
        return Discrimination(name, None, None, None, reason=reason, **common)
    reps = _replicates(fn, s, y, resamples, seed)
    reps = reps[np.isfinite(reps)]
    alpha = 1.0 - float(level)
    low, high = np.quantile(reps, [alpha / 2, 1 - alpha / 2]) if reps.size else (math.nan, math.nan)
    return Discrimination(name, _num(fn(s, y)), _num(low), _num(high), **common)
