"""The orchestration lab's figures, drawn on a matplotlib ``Axes``:

- :func:`draw_accuracy` — each policy's accuracy (right / n) with its 95% Wilson interval, one marker per model;
- :func:`draw_calls` — model calls requested per question (the table's ``calls/q``: the cost of a policy);
- :func:`figure` — both side by side (the experiment's ``figure.png``);
- :func:`draw_signal_map` — one run's first-round (SE, SD) per question, right or wrong, with a policy's
  thresholds: where the gate can catch a wrong answer and where no sampling gate can.

Every marker sits inside its axes (the limits leave room for a dot at accuracy 0 or 1) and legends sit outside
the data.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .record import OrchestrationRun, gate_of

__all__ = ["draw_accuracy", "draw_calls", "draw_signal_map", "figure"]

#: the region where a gate raises a concern, and the colours of right and wrong first answers
CONCERN_COLOUR, RIGHT_COLOUR, WRONG_COLOUR = "#fdd8b0", "tab:green", "#b2182b"
#: the drawn range of both signals (a point dodged off its value stays inside it) and the axis limits
SIGNAL_RANGE, SIGNAL_LIMITS = (-0.04, 1.04), (-0.08, 1.08)
#: the smallest distance between two drawn points of the signal map, in signal units (about one marker)
DODGE_STEP = 0.03
_GOLDEN_ANGLE = np.pi * (3 - np.sqrt(5))


def _by_policy(result: Any, key: str) -> dict[str, np.ndarray]:
    """``{model: values of summary-row ``key`` per policy}`` in the result's policy order (NaN where a model
    did not run a policy)."""
    rows = result.summary_rows()
    out = {}
    for model in result.models:
        mine = {r["policy"]: r for r in rows if r["model"] == model}
        out[model] = np.array([mine[p][key] if p in mine else np.nan for p in result.policies], dtype=float)
    return out


def _offsets(n_policies: int, n_models: int, k: int) -> tuple[np.ndarray, float]:
    width = 0.8 / max(n_models, 1)
    return np.arange(n_policies) + (k - (n_models - 1) / 2) * width, width


def _finish(ax: Any, policies: list[str], title: str) -> None:
    ax.set_xticks(np.arange(len(policies)), policies)
    ax.set_xlim(-0.6, len(policies) - 0.4)
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)


def draw_accuracy(ax: Any, result: Any, *, legend: bool = True) -> Any:
    """Accuracy per policy (dot: right / n) with its 95% Wilson interval (error bar), one series per model; with
    several models and ``legend``, a legend beside the axes names them."""
    acc, lo, hi = (_by_policy(result, k) for k in ("accuracy", "ci_low", "ci_high"))
    models, policies = result.models, result.policies
    for k, model in enumerate(models):
        off, _ = _offsets(len(policies), len(models), k)
        ax.errorbar(off, acc[model], yerr=[acc[model] - lo[model], hi[model] - acc[model]], fmt="o", capsize=4,
                    label=model)
    _finish(ax, policies, "accuracy: dot = right / n, bar = 95% Wilson interval")
    ax.set_ylim(-0.07, 1.07)  # a dot at 0 or 1 shows whole
    ax.set_ylabel("share of questions right")
    n = max((r["n"] for r in result.summary_rows()), default=0)
    ax.set_xlabel(f"policy (n = {n} questions)")
    if legend and len(models) > 1:
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0))
    return ax


def draw_calls(ax: Any, result: Any) -> Any:
    """Model calls requested per question for each policy (bars, the value written on top), one series per
    model: ``n`` samples per round, more for every round a concern adds."""
    calls = _by_policy(result, "calls_per_question")
    models, policies = result.models, result.policies
    for k, model in enumerate(models):
        off, width = _offsets(len(policies), len(models), k)
        bars = ax.bar(off, calls[model], width=width * 0.9, label=model)
        ax.bar_label(bars, labels=["" if np.isnan(v) else f"{v:.1f}" for v in calls[model]], padding=2,
                     fontsize="small")
    _finish(ax, policies, "cost: model calls per question (calls/q)")
    top = np.nanmax([np.nanmax(v) if np.isfinite(v).any() else 0.0 for v in calls.values()] + [1.0])
    ax.set_ylim(0, top * 1.15)  # room for the values written on the bars
    ax.set_ylabel("generations requested per question")
    ax.set_xlabel("policy")
    return ax


def figure(result: Any):
    """Accuracy with Wilson intervals per policy (left) and model calls per question (right); with several
    models, one legend under both panels."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10.5, 4.0), layout="constrained")
    ax_acc, ax_calls = fig.subplots(1, 2)
    draw_accuracy(ax_acc, result, legend=False)
    draw_calls(ax_calls, result)
    if len(result.models) > 1:
        handles, labels = ax_calls.get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncols=len(labels), fontsize="small")
    return fig


def _clean_box(gate: Any) -> tuple[float, float]:
    """(τ_E, τ_D) of the region where ``gate`` raises no concern, SE ≤ τ_E and SD ≥ τ_D; a gate the policy does
    not read moves its edge to the end of the range."""
    lo, hi = SIGNAL_LIMITS
    return (gate.entropy_threshold if "entropy" in gate.metrics else hi,
            gate.density_threshold if "density" in gate.metrics else lo)


def _shade_concern(ax: Any, gate: Any) -> None:
    """Shade where ``gate`` raises a concern — SE > τ_E or SD < τ_D: the whole square but the clean box at the top
    left — as one polygon (the two gates' regions overlap without darkening), and draw the thresholds."""
    from matplotlib.patches import Polygon

    if not gate.metrics:
        return
    lo, hi = SIGNAL_LIMITS
    tau_e, tau_d = _clean_box(gate)
    rule = " or ".join(t for m, t in (("entropy", "SE > τ_E"), ("density", "SD < τ_D")) if m in gate.metrics)
    ax.add_patch(Polygon([(lo, lo), (hi, lo), (hi, hi), (tau_e, hi), (tau_e, tau_d), (lo, tau_d)],
                         facecolor=CONCERN_COLOUR, edgecolor="none", zorder=0,
                         label=f"concern ({gate.name}): {rule}"))
    if "entropy" in gate.metrics:
        ax.axvline(tau_e, color="0.25", ls="--", lw=1, label=f"τ_E = {tau_e:g} (H/ln n)")
    if "density" in gate.metrics:
        ax.axhline(tau_d, color="0.25", ls=":", lw=1.2, label=f"τ_D = {tau_d:g}")


def _dodge(x: np.ndarray, y: np.ndarray, gate: Any, step: float = DODGE_STEP) -> tuple[np.ndarray, np.ndarray]:
    """Spread points that would overlap: each point in turn takes the first place on a sunflower spiral around its
    value (r_k = 0.6·step·√k, θ_k = k·137.5°) that lies at least ``step`` from every point placed before it, inside
    :data:`SIGNAL_RANGE` and on the same side of both thresholds as its value — so a dodge never moves a point
    across a threshold. A point with no free place within 400 steps stays on its value."""
    tau_e, tau_d = _clean_box(gate)
    k = np.arange(400)
    spiral = 0.6 * step * np.sqrt(k)[:, None] * np.column_stack([np.cos(k * _GOLDEN_ANGLE), np.sin(k * _GOLDEN_ANGLE)])
    lo, hi = SIGNAL_RANGE
    placed = np.zeros((0, 2))
    out = np.column_stack([x, y]).astype(float)
    for i, (px, py) in enumerate(out):
        c = np.array([px, py]) + spiral
        ok = ((c >= lo) & (c <= hi)).all(axis=1) & ((c[:, 0] > tau_e) == (px > tau_e)) & (
            (c[:, 1] < tau_d) == (py < tau_d))
        if len(placed):
            ok &= (np.hypot(c[:, None, 0] - placed[None, :, 0], c[:, None, 1] - placed[None, :, 1]) >= step).all(1)
        if ok.any():
            out[i] = c[np.argmax(ok)]
        placed = np.vstack([placed, out[i]])
    return out[:, 0], out[:, 1]


def draw_signal_map(run: OrchestrationRun, policy: Any = None, *, ax: Any = None, title: str | None = None):
    """Each question's first-round (SE, SD) as a point — ● = the first answer was right, ✕ = wrong (refusals
    included) — over the region where the policy raises a concern (SE > τ_E or SD < τ_D, shaded; it also does so
    for a missing value or an invalid answer, wherever the point lies). A wrong answer in the clean corner
    (SE ≈ 0, SD ≈ 1) is an error every sample shared; no sampling gate can catch it. ``policy`` judges the
    signals (default: :func:`~.record.gate_of`). Points that would overlap are spread around their value (never
    across a threshold, see :func:`_dodge`), so every question shows; one without a value is counted in the
    title. Returns the figure (a new one unless ``ax`` is given); the legend sits beside the axes."""
    from matplotlib.figure import Figure

    gate = gate_of(run, policy)
    if ax is None:
        fig = Figure(figsize=(8.6, 4.8), layout="constrained")
        ax = fig.subplots()
    else:
        fig = ax.figure
    s = [r.trace.first_signals for r in run.records]
    se = np.array([x.entropy for x in s], dtype=float)
    sd = np.array([x.density for x in s], dtype=float)
    shown = np.isfinite(se) & np.isfinite(sd)
    ok = run.first_correct[shown]
    x, y = _dodge(se[shown], sd[shown], gate)
    _shade_concern(ax, gate)
    ax.scatter(x[ok], y[ok], s=30, marker="o", color=RIGHT_COLOUR, edgecolors="white", linewidths=0.5,
               label=f"right in round 1 ({int(ok.sum())})", zorder=3)
    ax.scatter(x[~ok], y[~ok], s=36, marker="x", color=WRONG_COLOUR, linewidths=1.8,
               label=f"wrong in round 1 ({int((~ok).sum())})", zorder=4)
    ax.set_xlim(*SIGNAL_LIMITS)
    ax.set_ylim(*SIGNAL_LIMITS)
    ax.set_xlabel("semantic entropy H / ln n, round 1 (high = the samples disagree)")
    ax.set_ylabel("semantic density, round 1 (low = spread out)")
    missing = len(s) - int(shown.sum())
    ax.set_title(title or f"round-1 signals of {len(s)} questions"
                 + (f" ({missing} without a value, not drawn)" if missing else ""))
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0))
    return fig
