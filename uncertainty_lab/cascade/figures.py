"""The cascade experiment's figure: one panel of S_t against the step per k (mean of the runs per selector with a
95% t-band, thin lines per run, the late window shaded), global vs local drift per run, and the per-step
uncertainty of the alternative samples when the runs sampled them. Each panel is a ``draw_*`` function on a
matplotlib ``Axes``; :func:`figure` lays them out.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .diagnostics import curve_band

__all__ = ["draw_alignment", "draw_drift", "draw_uncertainty", "figure"]

_MARKERS = "osD^v<>p*h"


def _colours(result: Any) -> dict[str, str]:
    selectors = list(dict.fromkeys(s for s, _ in result.conditions))
    return {s: f"C{i % 10}" for i, s in enumerate(selectors)}


def _band(ax: Any, curves: list[np.ndarray], colour: str, label: str) -> None:
    """The mean of ``curves`` with its 95% t-band, and each curve as a thin line."""
    if not curves:
        return
    mean, lo, hi = curve_band(curves)
    steps = np.arange(1, mean.size + 1)
    for c in curves:
        ax.plot(np.arange(1, c.size + 1), c, color=colour, lw=0.6, alpha=0.35)
    ax.plot(steps, mean, color=colour, lw=2, marker="o", ms=3, label=label)
    if np.isfinite(lo).any():
        ax.fill_between(steps, lo, hi, color=colour, alpha=0.15)


def draw_alignment(ax: Any, result: Any, k: int) -> None:
    """S_t against the step t for every selector run with budget ``k``; the late window shaded; the y range set
    by the runs themselves (a t-band from 2 runs can be many times wider)."""
    from matplotlib.ticker import MaxNLocator

    colours = _colours(result)
    L = result.config.steps
    late_start = L - max(1, math.ceil(result.config.late_fraction * L)) + 1
    ax.axvspan(late_start - 0.5, L + 0.5, color="0.9", zorder=0, label="late window")
    for sel in colours:
        if (sel, k) in result.conditions:
            _band(ax, result.curves("alignment", sel, k), colours[sel], sel)
    ax.set_title(f"alignment S_t, k = {k} (mean of {result.config.runs} run(s), 95% band)", fontsize="medium")
    ax.set_xlabel("step t")
    ax.set_ylabel("S_t = cos(text, local references)")
    ax.set_xlim(0.5, L + 0.5)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    values = np.concatenate([c for sel in colours for c in result.curves("alignment", sel, k)] or [np.zeros(0)])
    values = values[np.isfinite(values)]
    if values.size:
        lo_v, hi_v = float(values.min()), float(values.max())
        pad = 0.25 * (hi_v - lo_v or 0.1)
        ax.set_ylim(max(-1.0, lo_v - pad), min(1.0, hi_v + pad))
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")


def draw_drift(ax: Any, result: Any) -> None:
    """Mean global drift against mean local drift, one point per run (colour: selector, marker: k), with the
    diagonal: above it, a run drifted further from the seed than from its memory."""
    colours = _colours(result)
    ks = list(dict.fromkeys(k for _, k in result.conditions))
    rows = result.run_rows()
    vals = [v for r in rows for v in (r["global_drift"], r["local_drift"]) if math.isfinite(v)]
    lo, hi = (min(vals), max(vals)) if vals else (0.0, 1.0)
    pad = 0.05 * (hi - lo or 1.0)
    ax.plot([lo - pad, hi + pad], [lo - pad, hi + pad], color="0.5", lw=1, ls="--", label="global = local")
    for r in rows:
        ax.scatter(r["local_drift"], r["global_drift"], color=colours[r["selector"]],
                   marker=_MARKERS[ks.index(r["k"]) % len(_MARKERS)], s=36,
                   label=f"{r['selector']}, k = {r['k']}" if r["run"] == 0 else None)
    ax.set_xlabel("mean local drift (from the memory centre)")
    ax.set_ylabel("mean global drift (from the seed)")
    ax.set_title("drift per run (above the line: global > local)", fontsize="medium")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")


def draw_uncertainty(ax: Any, result: Any) -> None:
    """The per-step uncertainty of the alternative samples, per selector and k (mean of runs with a band)."""
    from matplotlib.ticker import MaxNLocator

    colours = _colours(result)
    for sel, k in result.conditions:
        _band(ax, result.curves("uncertainty", sel, k), colours[sel], f"{sel}, k = {k}")
    ax.set_title(f"per-step uncertainty ({result.metric_name()}, m = {result.config.samples_per_step})",
                 fontsize="medium")
    ax.set_xlabel("step t")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel("uncertainty of the alternative samples")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")


def figure(result: Any) -> Any:
    """The experiment's figure (a matplotlib Figure, not shown): :func:`draw_alignment` for each k,
    :func:`draw_drift`, and :func:`draw_uncertainty` when ``samples_per_step`` > 0."""
    from matplotlib.figure import Figure

    ks = list(dict.fromkeys(k for _, k in result.conditions))
    sampled = result.config.samples_per_step > 0
    n_panels = len(ks) + 1 + (1 if sampled else 0)
    fig = Figure(figsize=(4.6 * n_panels, 3.9), layout="constrained")
    axes = fig.subplots(1, n_panels, squeeze=False)[0]
    for ax, k in zip(axes[: len(ks)], ks, strict=True):
        draw_alignment(ax, result, k)
    draw_drift(axes[len(ks)], result)
    if sampled:
        draw_uncertainty(axes[-1], result)
    return fig
