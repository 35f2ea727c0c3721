"""Diagnostics of a cascade (HawkesLLM §3): alignment with local held-out references, global and local drift,
per-run summaries and their aggregation over runs. z(·) is a text embedding (all-MiniLM-L6-v2 by default —
independent of the generator, so alignment is not inflated by a shared source; any object with
``encode(texts) -> (n, d)`` can be injected).

- **Alignment** S_t = cos(z(x_t), centroid of z(r) over R_t), R_t = held-out texts of the **same node** within
  ±``window`` (12 h) of τ_t, widened to ±``wide_window`` (24 h) when that is empty; NaN, with the reason, when
  even the wide window is empty.
- **Global drift** D^global_t = 1 − cos(z(x_t), z(x_0)), the distance from the seed.
- **Local drift** D^local_t = 1 − cos(z(x_t), Σ_{j∈M_t} w_{j,t} z(x_{r_t(j)})): the distance from the weighted
  centre of the memory that was in the prompt, with whatever weights the selector returned (uniform for the
  baselines); NaN with a reason when the memory was empty.

The per-step curves cover the generated events t = 1..L (the seed is their reference point, not a data point).

Per-run summary of a curve (:func:`summarize`):

- **mean** over the steps where it is defined;
- **trend**: OLS of the value on the step number (statsmodels), slope with its 95% confidence interval;
  "increasing" when the whole interval is above 0, "decreasing" when below 0, "flat" when it contains 0
  (no dead band to tune: the interval is the dead band), "undetermined" with fewer than 3 defined values;
- **late-stage mean**: the mean over the last third of the steps, i.e. the last ceil(L/3) steps
  (``late_fraction``), the window where accumulated drift would show.

Over runs (:func:`aggregate`): mean ± sd and a two-sided t-interval (n − 1 degrees of freedom) of each run
summary, the trend labels counted, and the per-run gap global − local drift.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..contracts.memory import CascadeError, Event

__all__ = [
    "CurveSummary",
    "Interval",
    "RunDiagnostics",
    "StepValues",
    "Trend",
    "aggregate",
    "alignment",
    "curve_band",
    "evaluate_run",
    "global_drift",
    "interval",
    "local_drift",
    "summarize",
    "trend",
]


@dataclass(frozen=True)
class StepValues:
    """A per-step diagnostic: ``values[t-1]`` for step t (NaN where undefined, ``reasons`` says why)."""

    name: str
    values: np.ndarray
    reasons: tuple[str | None, ...]
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def steps(self) -> np.ndarray:
        return np.arange(1, self.values.size + 1)

    def __len__(self) -> int:
        return int(self.values.size)


def _embedder(embedder):
    if embedder is None:
        from ..embeddings import Embedder

        return Embedder()
    if not callable(getattr(embedder, "encode", None)):
        raise CascadeError(f"embedder must have encode(texts) -> array (e.g. uncertainty_lab.embeddings.Embedder()), got {embedder!r}")
    return embedder


def _embed(embedder, texts: Sequence[str]) -> np.ndarray:
    if not texts:
        return np.zeros((0, 0))
    z = np.asarray(embedder.encode(list(texts)), dtype=float)
    if z.ndim != 2 or z.shape[0] != len(texts):
        raise CascadeError(f"embedder.encode returned shape {z.shape} for {len(texts)} texts; expected (n, d)")
    return z


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    if na == 0.0 or nb == 0.0:
        return math.nan
    return float(np.clip(a @ b / (na * nb), -1.0, 1.0))


def alignment(events: Sequence[Event], references: Sequence[Event], *, embedder: Any = None,
              window: float = 12.0, wide_window: float | None = 24.0) -> StepValues:
    """S_t for each event against held-out ``references`` (Events: time, node, text). ``window`` and
    ``wide_window`` are half-widths in the time unit (hours); ``wide_window=None`` disables the widening.
    ``extra``: ``window_used`` (per event, NaN when none) and ``n_refs``."""
    window = float(window)
    if not (math.isfinite(window) and window >= 0):
        raise CascadeError(f"window must be a finite half-width >= 0, got {window!r}")
    if wide_window is not None and not (math.isfinite(float(wide_window)) and float(wide_window) >= window):
        raise CascadeError(f"wide_window must be >= window ({window}) or None, got {wide_window!r}")
    events, references = list(events), list(references)
    for name, seq in (("events", events), ("references", references)):
        for i, e in enumerate(seq):
            if not isinstance(e, Event):
                raise CascadeError(f"{name}[{i}] must be an Event(time, node, text), got {type(e).__name__}")
    emb = _embedder(embedder) if events else None
    z_ev = _embed(emb, [e.text for e in events]) if events else None
    z_ref = _embed(emb, [r.text for r in references]) if events and references else None
    r_t = np.array([r.time for r in references], dtype=float)
    r_n = np.array([r.node for r in references], dtype=np.int64)
    values = np.full(len(events), math.nan)
    used = np.full(len(events), math.nan)
    n_refs = np.zeros(len(events), dtype=np.int64)
    reasons: list[str | None] = []
    windows = [window] + ([float(wide_window)] if wide_window is not None and float(wide_window) > window else [])
    for i, e in enumerate(events):
        reason = None
        for w in windows:
            mask = (r_n == e.node) & (np.abs(r_t - e.time) <= w)
            if mask.any():
                centroid = z_ref[mask].mean(axis=0)
                values[i] = _cos(z_ev[i], centroid)
                used[i], n_refs[i] = w, int(mask.sum())
                if math.isnan(values[i]):
                    reason = "a zero embedding (cosine undefined)"
                break
        else:
            reason = f"no held-out text of node {e.node} within ±{windows[-1]:g} of t={e.time:g}"
        reasons.append(reason)
    return StepValues("alignment", values, tuple(reasons), {"window_used": used, "n_refs": n_refs})


def global_drift(texts: Sequence[str], seed_text: str, *, embedder: Any = None) -> StepValues:
    """D^global_t = 1 − cos(z(x_t), z(x_0)) for each generated text x_t."""
    texts = list(texts)
    if not texts:
        return StepValues("global_drift", np.zeros(0), ())
    z = _embed(_embedder(embedder), [seed_text] + texts)
    vals = np.array([1.0 - _cos(z[i], z[0]) for i in range(1, len(z))])
    reasons = tuple(None if math.isfinite(v) else "a zero embedding (cosine undefined)" for v in vals)
    return StepValues("global_drift", vals, reasons)


def local_drift(texts: Sequence[str], memories: Sequence[Sequence[Any]], *, embedder: Any = None) -> StepValues:
    """D^local_t = 1 − cos(z(x_t), Σ w z(x_r)) with ``texts`` = all event texts x_0..x_L (index 0 the seed) and
    ``memories[t-1]`` = step t's memory items (``.index`` into texts, ``.weight``; or (index, weight) pairs)."""
    texts = list(texts)
    if len(memories) != len(texts) - 1:
        raise CascadeError(
            f"local_drift needs one memory per generated text: {len(memories)} memories for {len(texts) - 1} "
            "generated texts (texts includes the seed at index 0)"
        )
    if not memories:
        return StepValues("local_drift", np.zeros(0), ())
    z = _embed(_embedder(embedder), texts)
    vals = np.full(len(memories), math.nan)
    reasons: list[str | None] = []
    for t, mem in enumerate(memories, start=1):
        items = [(it.index, it.weight) if hasattr(it, "weight") else (int(it[0]), float(it[1])) for it in mem]
        if not items:
            reasons.append("empty memory")
            continue
        for idx, _ in items:
            if not 0 <= idx < t:
                raise CascadeError(f"step {t}: memory index {idx} does not point at an earlier event (0..{t - 1})")
        centre = sum(w * z[idx] for idx, w in items)
        vals[t - 1] = 1.0 - _cos(z[t], centre)
        reasons.append(None if math.isfinite(vals[t - 1]) else "zero memory centre or embedding")
    return StepValues("local_drift", vals, tuple(reasons))


# --- summaries --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Trend:
    """OLS slope of a curve on the step number, its confidence interval and the label it implies."""

    slope: float
    ci_low: float
    ci_high: float
    intercept: float
    label: str  # "increasing", "decreasing", "flat" or "undetermined"
    n: int
    level: float = 0.95


def trend(values: Sequence[float], steps: Sequence[float] | None = None, *, level: float = 0.95) -> Trend:
    """Fit value = a + b·step by OLS on the defined values; label by the ``level`` CI of b:
    increasing (CI > 0), decreasing (CI < 0), flat (CI contains 0); undetermined with < 3 values."""
    y = np.asarray(values, dtype=float)
    x = np.arange(1, y.size + 1, dtype=float) if steps is None else np.asarray(steps, dtype=float)
    if x.shape != y.shape:
        raise CascadeError(f"steps has shape {x.shape} but values has {y.shape}")
    ok = np.isfinite(y) & np.isfinite(x)
    x, y = x[ok], y[ok]
    n = int(y.size)
    if n < 3 or np.ptp(x) == 0:
        if n >= 2 and np.ptp(x) > 0:
            b, a = np.polyfit(x, y, 1)
            return Trend(float(b), math.nan, math.nan, float(a), "undetermined", n, level)
        return Trend(math.nan, math.nan, math.nan, math.nan, "undetermined", n, level)
    from scipy import stats

    # the closed form of OLS with one regressor (what statsmodels' OLS computes; importing it cost 2–12 s per process):
    # b = Sxy/Sxx, a = ȳ − b x̄, se(b) = √(SSR/(n − 2)/Sxx), CI = b ± t_{n−2} se(b); a perfect fit gives CI = [b, b]
    xc = x - x.mean()
    sxx = float(xc @ xc)
    b = float(xc @ (y - y.mean())) / sxx
    a = float(y.mean() - b * x.mean())
    resid = y - (a + b * x)
    half = float(stats.t.ppf(0.5 + level / 2, n - 2)) * math.sqrt(float(resid @ resid) / (n - 2) / sxx)
    lo, hi = b - half, b + half
    label = "increasing" if lo > 0 else "decreasing" if hi < 0 else "flat"
    return Trend(b, lo, hi, a, label, n, level)


@dataclass(frozen=True)
class CurveSummary:
    """One run's summary of a per-step curve: mean, trend and late-stage mean (steps ≥ ``late_start``)."""

    name: str
    mean: float
    trend: Trend
    late_mean: float
    late_start: int
    n: int
    n_missing: int

    def as_dict(self) -> dict[str, Any]:
        return {f"{self.name}_mean": self.mean, f"{self.name}_trend": self.trend.label,
                f"{self.name}_slope": self.trend.slope, f"{self.name}_slope_ci": (self.trend.ci_low, self.trend.ci_high),
                f"{self.name}_late": self.late_mean}


def _nanmean(x: np.ndarray) -> float:
    x = x[np.isfinite(x)]
    return float(x.mean()) if x.size else math.nan


def summarize(curve: StepValues | Sequence[float], *, late_fraction: float = 1 / 3, level: float = 0.95,
              name: str | None = None) -> CurveSummary:
    """Mean, trend (:func:`trend`) and late-stage mean over the last ceil(late_fraction·L) steps of a curve."""
    if not 0 < late_fraction <= 1:
        raise CascadeError(f"late_fraction must be in (0, 1], got {late_fraction!r}")
    if isinstance(curve, StepValues):
        values, label = curve.values, curve.name
    else:
        values, label = np.asarray(curve, dtype=float), "curve"
    label = name or label
    L = int(values.size)
    n_late = max(1, math.ceil(late_fraction * L)) if L else 0
    late_start = L - n_late + 1
    finite = int(np.isfinite(values).sum())
    return CurveSummary(label, _nanmean(values), trend(values, level=level),
                        _nanmean(values[L - n_late:]) if L else math.nan, late_start, finite, L - finite)


@dataclass
class RunDiagnostics:
    """The three curves of one run and their summaries (``summaries[name]``, name in alignment / global_drift /
    local_drift; alignment is absent without references)."""

    curves: dict[str, StepValues]
    summaries: dict[str, CurveSummary]

    def __getattr__(self, name: str):
        curves = self.__dict__.get("curves", {})
        if name in curves:
            return curves[name]
        raise AttributeError(name)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for s in self.summaries.values():
            out.update(s.as_dict())
        return out


def evaluate_run(run: Any, references: Sequence[Event] | None = None, *, embedder: Any = None,
                 window: float = 12.0, wide_window: float | None = 24.0, late_fraction: float = 1 / 3) -> RunDiagnostics:
    """Alignment (when ``references`` are given), global and local drift of a CascadeRun, and their summaries."""
    emb = _embedder(embedder)
    events = run.events
    gen = events[1:]
    texts = [e.text for e in events]
    curves: dict[str, StepValues] = {}
    if references is not None:
        curves["alignment"] = alignment(gen, references, embedder=emb, window=window, wide_window=wide_window)
    curves["global_drift"] = global_drift(texts[1:], texts[0], embedder=emb)
    curves["local_drift"] = local_drift(texts, [s.memory for s in run.steps], embedder=emb)
    summaries = {name: summarize(c, late_fraction=late_fraction) for name, c in curves.items()}
    return RunDiagnostics(curves, summaries)


# --- over runs ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Interval:
    """mean ± sd over n runs with a two-sided t confidence interval (NaN bounds when n < 2)."""

    mean: float
    sd: float
    n: int
    ci_low: float
    ci_high: float
    level: float = 0.95

    def __str__(self) -> str:
        return f"{self.mean:.3f} ± {self.sd:.3f} (n={self.n}, {self.level:.0%} CI [{self.ci_low:.3f}, {self.ci_high:.3f}])"


def interval(values: Sequence[float], *, level: float = 0.95) -> Interval:
    """Mean, sample sd (ddof=1) and the t-interval mean ± t_{(1+level)/2, n−1}·sd/√n of the finite values."""
    from scipy import stats

    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    n = int(x.size)
    if n == 0:
        return Interval(math.nan, math.nan, 0, math.nan, math.nan, level)
    mean = float(x.mean())
    if n < 2:
        return Interval(mean, math.nan, 1, math.nan, math.nan, level)
    sd = float(x.std(ddof=1))
    half = float(stats.t.ppf((1 + level) / 2, n - 1)) * sd / math.sqrt(n)
    return Interval(mean, sd, n, mean - half, mean + half, level)


def aggregate(runs: Sequence[RunDiagnostics], *, level: float = 0.95) -> dict[str, Any]:
    """Over runs: for each curve, intervals of the run means, late-stage means and slopes, and the trend labels
    counted; plus ``drift_gap`` (global − local mean drift per run) and how many runs had global > local."""
    runs = list(runs)
    if not runs:
        raise CascadeError("aggregate needs at least one RunDiagnostics (from evaluate_run)")
    out: dict[str, Any] = {}
    names = sorted({n for r in runs for n in r.summaries})
    for name in names:
        ss = [r.summaries[name] for r in runs if name in r.summaries]
        out[name] = {
            "mean": interval([s.mean for s in ss], level=level),
            "late_mean": interval([s.late_mean for s in ss], level=level),
            "slope": interval([s.trend.slope for s in ss], level=level),
            "trends": dict(Counter(s.trend.label for s in ss)),
        }
    if "global_drift" in names and "local_drift" in names:
        gaps = [r.summaries["global_drift"].mean - r.summaries["local_drift"].mean for r in runs]
        out["drift_gap"] = interval(gaps, level=level)
        out["global_exceeds_local"] = sum(1 for g in gaps if g > 0)
    return out


def curve_band(curves: Sequence[Sequence[float]], *, level: float = 0.95) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Step-wise mean and t-interval bounds over runs (curves padded with NaN to the longest), for band plots."""
    from scipy import stats

    curves = [np.asarray(c, dtype=float) for c in curves]
    if not curves:
        raise CascadeError("curve_band needs at least one curve")
    L = max(c.size for c in curves)
    m = np.full((len(curves), L), math.nan)
    for i, c in enumerate(curves):
        m[i, : c.size] = c
    n = np.isfinite(m).sum(axis=0)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(m, axis=0)
        sd = np.nanstd(m, axis=0, ddof=1)
        half = np.where(n >= 2, stats.t.ppf((1 + level) / 2, np.maximum(n - 1, 1)) * sd / np.sqrt(np.maximum(n, 1)), np.nan)
    return mean, mean - half, mean + half
