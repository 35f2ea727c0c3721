"""The search experiment's figures, drawn from a :class:`~uncertainty_lab.search.result.SearchResult` on a
matplotlib ``Axes`` (a new figure when none is given): tokens vs accuracy per condition with intervals, and how
each condition's episodes stopped; :func:`figure` puts them side by side (``figure.png``)."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["draw_stop_reasons", "draw_tokens_accuracy", "figure"]

_BELIEF_COLOURS = {"implicit": "tab:blue", "predicate": "tab:orange"}
_MARKERS = ["o", "s", "^", "D", "v", "P", "X"]
_STOP_COLOURS = {"answered": "tab:green", "exhausted": "tab:purple", "budget": "tab:gray"}
#: colours for stop kinds no built-in gate uses, in order
_OTHER_COLOURS = ["tab:orange", "tab:blue", "tab:red", "tab:brown", "tab:pink", "tab:olive", "tab:cyan"]


def _axes(ax: Any, figsize: tuple[float, float]) -> tuple[Any, Any]:
    """(figure or None, axes): the given axes, or a new figure's single axes."""
    if ax is not None:
        return None, ax
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.subplots()


def draw_tokens_accuracy(result: Any, ax: Any = None, tokens: str = "context_tokens"):
    """Mean tokens (x, bootstrap interval) vs exact match (y, Wilson interval), one point per condition;
    colour = belief, marker = gate set, filled = heuristic / open = llm policy. ``tokens``: "context_tokens" or
    "model_tokens". Returns the figure."""
    fig, ax = _axes(ax, (6, 4.2))
    rows = result.summary_rows()
    gate_sets = list(dict.fromkeys(r["gates"] for r in rows))
    for r in rows:
        t, em = r[tokens], r["exact_match"]
        colour = _BELIEF_COLOURS.get(r["belief"], "tab:gray")
        marker = _MARKERS[gate_sets.index(r["gates"]) % len(_MARKERS)]
        face = colour if r["policy"] == "heuristic" else "none"
        xerr = np.maximum(0.0, np.nan_to_num([[t["mean"] - t["low"]], [t["high"] - t["mean"]]]))
        yerr = np.maximum(0.0, [[em["rate"] - em["low"]], [em["high"] - em["rate"]]])
        ax.errorbar([t["mean"]], [em["rate"]], xerr=xerr, yerr=yerr, fmt=marker, color=colour,
                    mfc=face, capsize=3, ms=7, label=r["condition"])
    ax.set_xlabel(("context tokens Σ Cost(a_t)" if tokens == "context_tokens" else "model tokens")
                  + " per episode (mean)")
    ax.set_ylabel("exact match")
    ax.set_ylim(-0.03, 1.03)
    ax.grid(alpha=0.3)
    ax.set_title(f"tokens vs accuracy ({result.config.level:.0%} intervals)")
    ax.legend(fontsize="x-small", loc="best")
    return fig if fig is not None else ax.figure


def _stop_colours(kinds: list[str]) -> dict[str, str]:
    """A colour per stop kind: the built-ins' own, then the others in turn."""
    others = iter(_OTHER_COLOURS * (1 + len(kinds) // len(_OTHER_COLOURS)))
    return {k: _STOP_COLOURS[k] if k in _STOP_COLOURS else next(others) for k in kinds}


def draw_stop_reasons(result: Any, ax: Any = None):
    """Stacked bars: how each condition's episodes stopped (every stop kind the result counts). Returns the
    figure."""
    fig, ax = _axes(ax, (6, 0.5 + 0.45 * len(result.conditions)))
    rows = result.summary_rows()
    kinds = result.stop_kinds()
    colours = _stop_colours(kinds)
    y = np.arange(len(rows))
    left = np.zeros(len(rows))
    for reason in kinds:
        vals = np.array([r["stop_reasons"][reason] / max(r["n"], 1) for r in rows])
        ax.barh(y, vals, left=left, color=colours[reason], label=reason)
        left += vals
    ax.set_yticks(y, [r["condition"] for r in rows], fontsize="small")
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of episodes")
    ax.set_title("stop reasons")
    ax.legend(fontsize="x-small", loc="lower right")
    return fig if fig is not None else ax.figure


def figure(result: Any):
    """Three panels: context tokens vs accuracy, model tokens vs accuracy, stop reasons."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(17, 4.8), layout="constrained")
    a, b, c = fig.subplots(1, 3, gridspec_kw={"width_ratios": [1, 1, 1.1]})
    draw_tokens_accuracy(result, a, "context_tokens")
    draw_tokens_accuracy(result, b, "model_tokens")
    b.get_legend().remove()
    draw_stop_reasons(result, c)
    return fig
