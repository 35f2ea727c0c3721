"""The search experiment's figures, drawn from a :class:`~uncertainty_lab.search.result.SearchResult` on a
matplotlib ``Axes`` (a new figure when none is given): tokens vs accuracy per condition with intervals, and how
each condition's episodes stopped; :func:`figure` puts them side by side (``figure.png``).

Nothing is hidden: the accuracy axis is padded so points at 0 or 1 show whole, conditions with the same
(tokens, accuracy) are set side by side by a few points (a gate that never fires gives exactly its twin's
episodes), and every legend sits outside the plotting area."""

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


def _dodges(points: list[tuple[float, float]], step: float = 8.0) -> list[float]:
    """Horizontal offsets in points: 0 for a unique point, and ``step`` apart, centred, for equal ones."""
    keys = [(round(x, 9), round(y, 9)) for x, y in points]
    out = []
    for i, key in enumerate(keys):
        same = [j for j, other in enumerate(keys) if other == key]
        out.append((same.index(i) - (len(same) - 1) / 2) * step)
    return out


def draw_tokens_accuracy(result: Any, ax: Any = None, tokens: str = "context_tokens"):
    """Mean tokens (x, bootstrap interval) vs exact match (y, Wilson interval), one point per condition;
    colour = belief, marker = gate set, filled = heuristic / open = llm policy; equal points side by side.
    ``tokens``: "context_tokens" or "model_tokens". Returns the figure."""
    from matplotlib.transforms import ScaledTranslation

    fig, ax = _axes(ax, (9, 4.2))
    rows = result.summary_rows()
    gate_sets = list(dict.fromkeys(r["gates"] for r in rows))
    dodges = _dodges([(r[tokens]["mean"], r["exact_match"]["rate"]) for r in rows])
    for r, dx in zip(rows, dodges, strict=True):
        t, em = r[tokens], r["exact_match"]
        colour = _BELIEF_COLOURS.get(r["belief"], "tab:gray")
        marker = _MARKERS[gate_sets.index(r["gates"]) % len(_MARKERS)]
        face = colour if r["policy"] == "heuristic" else "none"
        xerr = np.maximum(0.0, np.nan_to_num([[t["mean"] - t["low"]], [t["high"] - t["mean"]]]))
        yerr = np.maximum(0.0, [[em["rate"] - em["low"]], [em["high"] - em["rate"]]])
        shift = ax.transData + ScaledTranslation(dx / 72, 0, ax.figure.dpi_scale_trans)
        ax.errorbar([t["mean"]], [em["rate"]], xerr=xerr, yerr=yerr, fmt=marker, color=colour,
                    mfc=face, capsize=3, ms=7, label=r["condition"], transform=shift)
        ax.update_datalim([(t["mean"] - xerr[0][0], em["rate"]), (t["mean"] + xerr[1][0], em["rate"])])
    ax.autoscale_view()
    ax.set_xlabel(("context tokens Σ Cost(a_t)" if tokens == "context_tokens" else "model tokens")
                  + " per episode (mean)")
    ax.set_ylabel("exact match")
    ax.set_ylim(-0.08, 1.08)
    ax.margins(x=0.08)
    ax.grid(alpha=0.3)
    what = "context tokens (Eq. 1)" if tokens == "context_tokens" else "model tokens (every model call)"
    ax.set_title(f"{what} vs accuracy ({result.config.level:.0%} intervals)")
    note = "\n(equal points side by side)" if any(dodges) else ""
    ax.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0,
              title="condition" + note, title_fontsize="x-small")
    return fig if fig is not None else ax.figure


def _stop_colours(kinds: list[str]) -> dict[str, str]:
    """A colour per stop kind: the built-ins' own, then the others in turn."""
    others = iter(_OTHER_COLOURS * (1 + len(kinds) // len(_OTHER_COLOURS)))
    return {k: _STOP_COLOURS[k] if k in _STOP_COLOURS else next(others) for k in kinds}


def draw_stop_reasons(result: Any, ax: Any = None):
    """Stacked bars: how each condition's episodes stopped (every stop kind the result counts). Returns the
    figure."""
    fig, ax = _axes(ax, (10, 0.9 + 0.45 * len(result.conditions)))  # room for the condition labels
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
    ax.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    return fig if fig is not None else ax.figure


def figure(result: Any):
    """Context tokens vs accuracy and model tokens vs accuracy side by side (the legend of the conditions to the
    right of the second), and the stop reasons under them, each row laid out on its own."""
    from matplotlib.figure import Figure

    n = len(result.conditions)
    fig = Figure(figsize=(16, 4.6 + 0.6 + 0.45 * n), layout="constrained")
    top, bottom = fig.subfigures(2, 1, height_ratios=[4.6, 0.6 + 0.45 * n])
    a, b = top.subplots(1, 2)
    draw_tokens_accuracy(result, a, "context_tokens")
    draw_tokens_accuracy(result, b, "model_tokens")
    a.get_legend().remove()
    draw_stop_reasons(result, bottom.subplots())
    n_q = max((len(eps) for eps in result.episodes.values()), default=0)
    fig.suptitle(f"CGDP search lab: {n} conditions × {n_q} questions — model {result.llm_label or result.config.llm}",
                 fontsize="medium")
    return fig
