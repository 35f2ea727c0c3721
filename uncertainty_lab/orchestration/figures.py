"""The orchestration lab's figures, drawn on a matplotlib ``Axes``:

- :func:`draw_accuracy` — each policy's accuracy with its 95% Wilson interval, one marker per model;
- :func:`draw_calls` — model calls per question (the cost of a policy);
- :func:`figure` — both side by side (the experiment's ``figure.png``);
- :func:`draw_signal_map` — one run's first-round (SE, SD) per question, right or wrong, with a policy's
  thresholds: where the gate can catch a wrong answer and where no sampling gate can.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .record import OrchestrationRun, gate_of

__all__ = ["draw_accuracy", "draw_calls", "draw_signal_map", "figure"]


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
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)


def draw_accuracy(ax: Any, result: Any) -> Any:
    """Accuracy per policy with its 95% Wilson interval (error bars), one series per model."""
    acc, lo, hi = (_by_policy(result, k) for k in ("accuracy", "ci_low", "ci_high"))
    models, policies = result.models, result.policies
    for k, model in enumerate(models):
        off, _ = _offsets(len(policies), len(models), k)
        ax.errorbar(off, acc[model], yerr=[acc[model] - lo[model], hi[model] - acc[model]], fmt="o", capsize=4,
                    label=model)
    _finish(ax, policies, "accuracy (95% Wilson interval)")
    ax.set_ylim(-0.02, 1.02)
    n = max((r["n"] for r in result.summary_rows()), default=0)
    ax.set_xlabel(f"policy (n = {n} questions)")
    if len(models) > 1:
        ax.legend(fontsize="small")
    return ax


def draw_calls(ax: Any, result: Any) -> Any:
    """Model calls per question for each policy (bars), one series per model."""
    calls = _by_policy(result, "calls_per_question")
    models, policies = result.models, result.policies
    for k, model in enumerate(models):
        off, width = _offsets(len(policies), len(models), k)
        ax.bar(off, calls[model], width=width * 0.9, label=model)
    _finish(ax, policies, "model calls per question")
    ax.set_xlabel("policy")
    return ax


def figure(result: Any):
    """Accuracy with Wilson intervals per policy (left) and model calls per question (right)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 3.8), layout="constrained")
    ax_acc, ax_calls = fig.subplots(1, 2)
    draw_accuracy(ax_acc, result)
    draw_calls(ax_calls, result)
    return fig


def _thresholds(ax: Any, gate: Any) -> None:
    """Shade the concern region of ``gate``: SE > τ_E (right) and SD < τ_D (bottom)."""
    if "entropy" in gate.metrics:
        tau_e = gate.entropy_threshold
        ax.axvspan(tau_e, 1.05, color="tab:red", alpha=0.08, lw=0)
        ax.axvline(tau_e, color="tab:red", ls="--", lw=1, label=f"τ_E = {tau_e:g} (H/ln n)")
    if "density" in gate.metrics:
        tau_d = gate.density_threshold
        ax.axhspan(-0.05, tau_d, color="tab:orange", alpha=0.08, lw=0)
        ax.axhline(tau_d, color="tab:orange", ls="--", lw=1, label=f"τ_D = {tau_d:g}")


def draw_signal_map(run: OrchestrationRun, policy: Any = None, *, ax: Any = None, title: str | None = None):
    """Each question's first-round (SE, SD) as a point — filled = the first answer was right, ✕ = wrong —
    with the policy's thresholds: concern when SE > τ_E or SD < τ_D (the shaded region). A wrong answer in
    the clean corner (SE ≈ 0, SD ≈ 1) is an error every sample shared; no sampling gate can catch it.
    ``policy`` judges the signals (default: :func:`~.record.gate_of`). Returns the figure (a new one unless
    ``ax`` is given). Points are jittered slightly so ties stay visible."""
    from matplotlib.figure import Figure

    gate = gate_of(run, policy)
    if ax is None:
        fig = Figure(figsize=(5.6, 4.4), layout="constrained")
        ax = fig.subplots()
    else:
        fig = ax.figure
    s = [r.trace.first_signals for r in run.records]
    se = np.array([x.entropy for x in s], dtype=float)
    sd = np.array([x.density for x in s], dtype=float)
    ok = run.first_correct
    jitter = np.random.default_rng(0).uniform(-0.012, 0.012, size=(2, len(s)))
    x, y = np.clip(se + jitter[0], -0.02, 1.02), np.clip(sd + jitter[1], -0.02, 1.02)
    _thresholds(ax, gate)
    ax.scatter(x[ok], y[ok], marker="o", color="tab:green", label=f"right ({int(ok.sum())})", zorder=3)
    ax.scatter(x[~ok], y[~ok], marker="x", color="tab:red", label=f"wrong ({int((~ok).sum())})", zorder=3)
    ax.set_xlim(-0.05, 1.05)
    ax.set_ylim(-0.05, 1.05)
    ax.set_xlabel("semantic entropy H / ln n (round 1)")
    ax.set_ylabel("semantic density (round 1)")
    ax.set_title(title or f"round-1 signals, {len(s)} questions; shaded = concern ({gate.name})")
    ax.legend(fontsize="small", loc="lower left")
    return fig
