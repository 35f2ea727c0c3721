"""The cascade experiment's figure, one ``draw_*`` function per panel on a matplotlib ``Axes``, laid out by
:func:`figure`:

- :func:`draw_alignment` — S_t per step for every selector at one k: the mean over runs (bold, dodged sideways
  so that equal values stay visible) and each run (thin), the late window shaded;
- :func:`draw_difference` — the paired difference S_t − S_t(baseline) per step, the mean over runs with its 95%
  t-band, and in the legend the run-level difference with its interval
  (:mod:`~uncertainty_lab.cascade.comparisons`): the panel that says whether a selector beats the baseline;
- :func:`draw_drift` — mean global vs mean local drift, one point per run (drift = 1 − cos, in [0, 2]);
- :func:`draw_uncertainty` — the per-step uncertainty of the alternative samples, when the runs sampled them.

Every band and point lies inside its axes (the limits are set from what is drawn) and every legend sits
outside the plotting area, so no legend hides data.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .comparisons import baseline_of, paired_difference, paired_steps
from .diagnostics import curve_band

__all__ = ["draw_alignment", "draw_difference", "draw_drift", "draw_uncertainty", "figure"]

_MARKERS = "osD^v<>p*h"
#: sideways offset between the selectors' mean points, in steps
_DODGE = 0.12


def _selectors(result: Any) -> list[str]:
    return list(dict.fromkeys(s for s, _ in result.conditions))


def _colours(result: Any) -> dict[str, str]:
    return {s: f"C{i % 10}" for i, s in enumerate(_selectors(result))}


def _legend(ax: Any, **kw: Any) -> None:
    """The legend to the right of the axes, where it cannot cover data."""
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, **kw)


def _fit_limits(ax: Any, values: list[np.ndarray], bounds: tuple[float, float], pad: float = 0.08) -> None:
    """y limits holding every finite value (clipped to ``bounds``) with a margin of ``pad`` of their range."""
    v = np.concatenate([np.ravel(x) for x in values] or [np.zeros(0)])
    v = v[np.isfinite(v)]
    if not v.size:
        return
    lo, hi = max(bounds[0], float(v.min())), min(bounds[1], float(v.max()))
    margin = pad * (hi - lo or 0.1)
    ax.set_ylim(lo - margin, hi + margin)


def _mean_line(ax: Any, steps: np.ndarray, mean: np.ndarray, colour: str, marker: str, label: str) -> None:
    """A mean curve: opaque markers (dodged by the caller) joined by a translucent line, so that curves with the
    same values all stay visible."""
    ax.plot(steps, mean, color=colour, lw=2, alpha=0.6)
    ax.plot(steps, mean, color=colour, ls="none", marker=marker, ms=5, label=label)


def _late_start(result: Any) -> int:
    L = result.config.steps
    return L - max(1, math.ceil(result.config.late_fraction * L)) + 1


def _steps_axis(ax: Any, result: Any) -> None:
    from matplotlib.ticker import MaxNLocator

    ax.set_xlim(0.5, result.config.steps + 0.5)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("step t")
    ax.grid(alpha=0.3)


def _memory_label(sel: str, row: dict) -> str:
    """``'hawkes (memory empty 100%, copies 0%)'``: the selector with how it used its memory."""
    empty, copies = row.get("memory_empty", math.nan), row.get("copies", math.nan)
    if not (math.isfinite(empty) and math.isfinite(copies)):
        return sel
    return f"{sel} (memory empty {empty:.0%}, copies {copies:.0%})"


def draw_alignment(ax: Any, result: Any, k: int) -> None:
    """S_t against the step for every selector run with budget ``k``: the mean over runs (bold, markers; the
    selectors dodged sideways by a fraction of a step) and, with two runs or more, each run (thin); the legend
    gives each selector's share of steps with an empty memory and of texts that copy."""
    colours = _colours(result)
    present = [s for s in colours if (s, k) in result.conditions]
    ax.axvspan(_late_start(result) - 0.5, result.config.steps + 0.5, color="0.9", zorder=0, label="late window")
    use = {(r["selector"], r["k"]): r for r in result.rows()}
    drawn = []
    for i, sel in enumerate(present):
        curves = result.curves("alignment", sel, k)
        mean = curve_band(curves)[0]
        shift = (i - (len(present) - 1) / 2) * _DODGE
        if len(curves) > 1:
            for c in curves:
                ax.plot(np.arange(1, c.size + 1) + shift, c, color=colours[sel], lw=0.6, alpha=0.35)
        _mean_line(ax, np.arange(1, mean.size + 1) + shift, mean, colours[sel], _MARKERS[i % len(_MARKERS)],
                   _memory_label(sel, use.get((sel, k), {})))
        drawn += [*curves, mean]
    runs = result.config.runs
    ax.set_title(f"alignment S_t, k = {k}: mean of {runs} run(s)" + (", thin: each run" if runs > 1 else ""),
                 fontsize="medium")
    ax.set_ylabel("S_t = cos(text, references)")
    _steps_axis(ax, result)
    _fit_limits(ax, drawn, (-1.0, 1.0))
    _legend(ax)


def draw_difference(ax: Any, result: Any, k: int, baseline: str | None = None) -> None:
    """S_t − S_t(``baseline``) per step for every other selector at budget ``k``, paired by run (same schedule):
    the mean over runs with its 95% t-band (clipped to [−2, 2]); the legend gives each selector's run-level
    difference with its interval (:func:`~uncertainty_lab.cascade.comparisons.paired_difference`)."""
    colours = _colours(result)
    baseline = baseline_of(result) if baseline is None else baseline
    others = [s for s in colours if s != baseline and (s, k) in result.conditions]
    ax.axhline(0.0, color="0.3", lw=1, label=f"no difference to {baseline}")
    drawn = []
    for i, sel in enumerate(others):
        d = paired_steps(result, sel, baseline, k)
        if not d.size:
            continue
        mean, lo, hi = (np.clip(x, -2.0, 2.0) for x in curve_band(list(d)))
        shift = (i - (len(others) - 1) / 2) * _DODGE
        steps = np.arange(1, mean.size + 1) + shift
        if np.isfinite(lo).any():
            ax.fill_between(steps, lo, hi, color=colours[sel], alpha=0.15, lw=0)
        iv = paired_difference(result, sel, baseline, k)
        ci = f" [{iv.ci_low:+.3f}, {iv.ci_high:+.3f}]" if math.isfinite(iv.ci_low) else " (one run: no interval)"
        label = f"{sel}: {iv.mean:+.3f}{ci}" if math.isfinite(iv.mean) else f"{sel}: — (no step with S_t)"
        _mean_line(ax, steps, mean, colours[sel], _MARKERS[(i + 1) % len(_MARKERS)], label)
        drawn += [mean, lo, hi]
    ax.set_title(f"S_t − S_t({baseline}), k = {k}: paired by run, 95% band", fontsize="medium")
    ax.set_ylabel(f"difference to {baseline}")
    _steps_axis(ax, result)
    _fit_limits(ax, drawn + [np.zeros(1)], (-2.0, 2.0))
    _legend(ax, title="mean over runs [95% CI]", title_fontsize="small")


def draw_drift(ax: Any, result: Any) -> None:
    """Mean global against mean local drift, one point per run (colour: selector, marker: k; the conditions set a
    few points apart sideways, so that equal points stay visible), with the diagonal: above it, a run drifted
    further from the seed than from its memory. Drift = 1 − cos lies in [0, 2]."""
    from matplotlib.transforms import ScaledTranslation

    colours = _colours(result)
    conditions = result.conditions
    ks = list(dict.fromkeys(k for _, k in conditions))
    rows = result.run_rows()
    vals = [v for r in rows for v in (r["global_drift"], r["local_drift"]) if math.isfinite(v)]
    lo, hi = (min(vals), max(vals)) if vals else (0.0, 1.0)
    pad = 0.05 * (hi - lo or 1.0)
    ax.plot([lo - pad, hi + pad], [lo - pad, hi + pad], color="0.5", lw=1, ls="--", label="global = local")
    seen = set()
    for r in rows:
        i, key = conditions.index((r["selector"], r["k"])), (r["selector"], r["k"])
        dx = (i - (len(conditions) - 1) / 2) * 4.0 / 72  # inches
        ax.scatter(r["local_drift"], r["global_drift"], color=colours[r["selector"]], s=36,
                   marker=_MARKERS[ks.index(r["k"]) % len(_MARKERS)],
                   transform=ax.transData + ScaledTranslation(dx, 0, ax.figure.dpi_scale_trans),
                   label=f"{r['selector']}, k = {r['k']}" if key not in seen else None)
        seen.add(key)
    ax.update_datalim([(r["local_drift"], r["global_drift"]) for r in rows
                       if math.isfinite(r["local_drift"]) and math.isfinite(r["global_drift"])])
    ax.margins(0.08)
    ax.autoscale_view()
    ax.set_xlabel("mean local drift (from the memory centre)")
    ax.set_ylabel("mean global drift (from the seed)")
    ax.set_title("drift per run (1 − cos, 0 to 2; above the line: global > local)", fontsize="medium")
    ax.grid(alpha=0.3)
    _legend(ax)


def draw_uncertainty(ax: Any, result: Any) -> None:
    """The per-step uncertainty of the alternative samples per selector and k: the mean over runs (dodged
    sideways) with its 95% t-band."""
    colours = _colours(result)
    conditions = result.conditions
    drawn = []
    for i, (sel, k) in enumerate(conditions):
        curves = result.curves("uncertainty", sel, k)
        if not curves:
            continue
        mean, lo, hi = curve_band(curves)
        steps = np.arange(1, mean.size + 1) + (i - (len(conditions) - 1) / 2) * _DODGE
        if np.isfinite(lo).any():
            ax.fill_between(steps, lo, hi, color=colours[sel], alpha=0.15, lw=0)
        _mean_line(ax, steps, mean, colours[sel], _MARKERS[i % len(_MARKERS)], f"{sel}, k = {k}")
        drawn += [mean, lo, hi]
    ax.set_title(f"per-step uncertainty ({result.metric_name()}, m = {result.config.samples_per_step})",
                 fontsize="medium")
    ax.set_ylabel("uncertainty of the alternative samples")
    _steps_axis(ax, result)
    _fit_limits(ax, drawn + [np.zeros(1)], (-math.inf, math.inf))  # from 0: no uncertainty
    _legend(ax)


def figure(result: Any) -> Any:
    """The experiment's figure (a matplotlib Figure, not shown), two panels a row: for each k
    :func:`draw_alignment` and, with two selectors or more, :func:`draw_difference`; then :func:`draw_drift`,
    and :func:`draw_uncertainty` when ``samples_per_step`` > 0."""
    from matplotlib.figure import Figure

    ks = list(dict.fromkeys(k for _, k in result.conditions))
    compare = len(_selectors(result)) > 1
    panels: list[Any] = []
    for k in ks:
        panels.append(lambda ax, k=k: draw_alignment(ax, result, k))
        if compare:
            panels.append(lambda ax, k=k: draw_difference(ax, result, k))
    panels.append(lambda ax: draw_drift(ax, result))
    if result.config.samples_per_step > 0:
        panels.append(lambda ax: draw_uncertainty(ax, result))
    rows = math.ceil(len(panels) / 2)
    fig = Figure(figsize=(14, 4.2 * rows), layout="constrained")
    axes = fig.subplots(rows, 2, squeeze=False).ravel()
    for ax, draw in zip(axes, panels, strict=False):
        draw(ax)
    for ax in axes[len(panels):]:
        fig.delaxes(ax)
    return fig
