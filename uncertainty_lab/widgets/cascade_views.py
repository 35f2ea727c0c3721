"""Notebook 02's views of a cascade: the Hawkes fit, one run step by step, its alternative samples — plain
functions over a fit or a :class:`~uncertainty_lab.cascade.CascadeRun` that a test can call without a browser.

- :func:`plot_alpha` / :func:`plot_beta_grid` — the fitted excitation α̂ as a heat-map labelled source → target,
  and the log-likelihood over the β grid with unstable candidates greyed out and ρ(G) annotated;
- :func:`memory_table` — Algorithm 1 at one step of a run: per node the raw excitation w^raw it sends to the
  target, the recency order, the selected set S and the normalised weights (for other selectors: what they chose);
- :func:`prompt_text` — the messages the model saw, as plain text;
- :func:`steps_table` — one row per step: time, node, memory (node: weight), text, S_t and the two drifts;
- :func:`samples_table` / :func:`uncertainty_curve` / :func:`draw_uncertainty_curves` — the alternative samples
  stored in a run, their rescoring with another metric (no model calls), and the curves side by side.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .. import registry
from ..hawkes.diagnostics import source_target_heatmap
from ..table import Table

__all__ = ["draw_uncertainty_curves", "memory_table", "plot_alpha", "plot_beta_grid", "prompt_text", "samples_table",
           "steps_table", "uncertainty_curve"]


def rounded(x: float, nd: int = 3) -> float:
    """``x`` rounded to ``nd`` digits for a table cell; NaN stays NaN."""
    return round(float(x), nd) if math.isfinite(float(x)) else math.nan


# --- fit pictures ----------------------------------------------------------------------------------------------


def plot_alpha(model: Any, node_names: Sequence[str] | None = None, *, ax: Any = None, annotate: bool = True):
    """Heat-map of α̂ (``alpha[source j, target i]``, per hour): rows are sources, columns targets. Returns
    (Figure, Axes)."""
    import matplotlib.pyplot as plt

    alpha = np.asarray(model.alpha, dtype=float)
    n = alpha.shape[0]
    names = list(node_names) if node_names is not None else [f"node {i}" for i in range(n)]
    if len(names) != n:
        raise ValueError(f"node_names has {len(names)} names for {n} nodes")
    if ax is None:
        fig, ax = plt.subplots(figsize=(1.2 * n + 2.8, 1.1 * n + 1.6), constrained_layout=True)
    else:
        fig = ax.figure
    source_target_heatmap(ax, alpha, names, cmap="magma", label="α̂ (jump in the target's rate, per hour)",
                          xlabel="target i  (the node that reacts)", ylabel="source j  (the node that spoke)",
                          annotate=annotate)
    beta = getattr(model, "beta", None)
    ax.set_title("α̂[source → target]" + (f", β = {beta:g} /h" if beta else ""), fontsize="medium")
    return fig, ax


def plot_beta_grid(fit: Any, *, ax: Any = None):
    """The training log-likelihood of each β candidate of a ``fit_hawkes`` result (unstable ones grey, the
    chosen one marked; none when β is undetermined, which the title says), each point annotated with ρ(G).
    Returns (Figure, Axes)."""
    import matplotlib.pyplot as plt

    rows = fit.table.to_dicts()
    if ax is None:
        fig, ax = plt.subplots(figsize=(6.4, 3.4), constrained_layout=True)
    else:
        fig = ax.figure
    beta = np.array([r["beta"] for r in rows], dtype=float)
    ll = np.array([r["loglik"] for r in rows], dtype=float)
    stable = np.array([bool(r["stable"]) for r in rows])
    chosen = np.array([bool(r.get("selected")) for r in rows])
    ax.plot(beta, ll, color="0.6", lw=1, zorder=1)
    ax.scatter(beta[stable], ll[stable], color="C0", zorder=2, label="stable (ρ(G) < 1)")
    if (~stable).any():
        ax.scatter(beta[~stable], ll[~stable], color="0.75", zorder=2, label="unstable: not eligible")
    if chosen.any():
        ax.scatter(beta[chosen], ll[chosen], s=160, facecolors="none", edgecolors="C3", lw=2, zorder=3,
                   label="chosen")
    for i, (b, v, r) in enumerate(zip(beta, ll, rows, strict=True)):  # the end labels lean inwards
        ha = "left" if i == 0 else "right" if i == len(rows) - 1 else "center"
        ax.annotate(f"ρ={r['rho']:.2f}", (b, v), textcoords="offset points", xytext=(0, -14), ha=ha,
                    fontsize="x-small")
    ax.set_xscale("log")
    ax.margins(x=0.06, y=0.22)  # room for the labels under the points and the ring round the chosen one
    ax.set_xlabel("decay β (per hour; log scale)")
    ax.set_ylabel("log-likelihood ℓ(β)")
    ax.set_title("β undetermined: ℓ(β) is flat over the grid (α̂ = 0)" if getattr(fit, "beta_note", "")
                 else "choosing β on the training events", fontsize="medium")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    return fig, ax


# --- one run, explained ------------------------------------------------------------------------------------------


def _selector_of(run: Any) -> Any:
    sel = run.config.get("selector", {})
    return registry.resolve("memory_selectors", (sel.get("name", "hawkes"), sel.get("params", {})))


def memory_table(run: Any, step: int, model: Any = None) -> Table:
    """What the memory selector did at ``step`` (1..L) of ``run``.

    For the ``hawkes`` selector (Algorithm 1), one row per node: its latest event before τ_t (index into the
    run's events, 0 = the seed, and time), its recency rank (1 = spoke most recently), the raw excitation
    w^raw_{j,t} = α̂_{j,n_t} Σ e^{-β(τ_t − τ_m)} it sends to the target node n_t, whether it is in S, and its
    normalised weight w_{j,t}. Recomputed with ``model`` (the fitted HawkesModel) and checked against the memory
    the run stored. For other selectors, one row per remembered event (index, node, time, weight, text).
    """
    from ..cascade import History

    if not 1 <= step <= len(run.steps):
        raise ValueError(f"step must be in 1..{len(run.steps)}, got {step!r}")
    s = run.steps[step - 1]
    history = History(run.node_specs, run.events[:step])
    names = run.node_names
    selector = _selector_of(run)
    if getattr(selector, "name", "") != "hawkes":
        rows = [{"index": m.index, "node": names[m.node], "time (h)": rounded(history[m.index].time, 1),
                 "weight": rounded(m.weight), "text": history[m.index].text} for m in s.memory]
        return Table(rows, ["index", "node", "time (h)", "weight", "text"],
                     title=f"step {step}: {selector.name} memory for {names[s.node]} at t = {s.time:.1f} h")
    if model is None:
        raise ValueError("memory_table needs model= (the fitted HawkesModel) to explain the hawkes selector")
    k = int(run.config["k"])
    ex = selector.explain(history, s.time, s.node, k, model)
    if list(ex.items) != list(s.memory):
        raise ValueError(f"step {step}: Algorithm 1 with this model selects {list(ex.items)}, but the run stored "
                         f"{list(s.memory)}; pass the model the run was made with")
    rank = {j: r + 1 for r, j in enumerate(sorted(
        (j for j in range(len(names)) if ex.latest[j] is not None),
        key=lambda j: (history[ex.latest[j]].time, ex.latest[j]), reverse=True))}
    weight = {m.node: m.weight for m in ex.items}
    rows = []
    for j, name in enumerate(names):
        latest = ex.latest[j]
        rows.append({
            "node j": name,
            "latest event": "—" if latest is None else latest,
            "its time (h)": math.nan if latest is None else rounded(history[latest].time, 1),
            "recency rank": "—" if j not in rank else rank[j],
            "w_raw": float(f"{ex.raw[j]:.4g}"),
            "in S": j in ex.selected,
            "weight w": rounded(weight[j]) if j in weight else 0.0,
        })
    title = (f"step {step}: target n_t = {names[s.node]} at τ_t = {s.time:.1f} h, k = {k} — S = "
             f"{[names[j] for j in ex.selected] or 'empty'}")
    return Table(rows, ["node j", "latest event", "its time (h)", "recency rank", "w_raw", "in S", "weight w"],
                 title=title)


def prompt_text(messages: Sequence[Mapping[str, str]]) -> str:
    """Chat messages as plain text, one ``--- role ---`` block each (what the model is sent, verbatim)."""
    return "\n".join(f"--- {m['role']} ---\n{m['content']}" for m in messages)


def steps_table(run: Any, diagnostics: Any = None, *, title: str = "") -> Table:
    """One row per step of ``run``: time, node, memory as ``node:weight`` (most relevant first, as in the
    prompt), the text, and S_t / global / local drift when ``diagnostics`` (from ``evaluate_run``) are given."""
    names = run.node_names
    events = run.events
    curves = getattr(diagnostics, "curves", {}) if diagnostics is not None else {}
    rows = []
    for i, s in enumerate(run.steps):
        row = {"step": s.step, "t (h)": rounded(s.time, 1), "node": names[s.node],
               "memory (node: weight)": ", ".join(f"{names[events[m.index].node]}: {m.weight:.2f}" for m in s.memory)
               or "(empty)", "text": s.text}
        for key, label in (("alignment", "S_t"), ("global_drift", "global drift"), ("local_drift", "local drift")):
            if key in curves:
                row[label] = rounded(curves[key].values[i])
        rows.append(row)
    columns = ["step", "t (h)", "node", "memory (node: weight)", "text"] + [
        label for key, label in (("alignment", "S_t"), ("global_drift", "global drift"), ("local_drift", "local drift"))
        if key in curves]
    return Table(rows, columns, title=title)


def samples_table(run: Any, *, title: str = "") -> Table:
    """One row per step of a run made with ``samples_per_step`` > 0: node, the kept text, the alternative samples
    and the uncertainty the run's metric gave them."""
    m = max((len(s.samples) for s in run.steps if s.samples), default=0)
    rows = []
    for s in run.steps:
        row = {"step": s.step, "node": run.node_names[s.node], "kept text": s.text}
        for i in range(m):
            row[f"sample {i + 1}"] = s.samples[i] if s.samples and i < len(s.samples) else ""
        row["uncertainty"] = rounded(s.uncertainty)
        rows.append(row)
    return Table(rows, ["step", "node", "kept text", *[f"sample {i + 1}" for i in range(m)], "uncertainty"],
                 title=title)


def uncertainty_curve(run: Any, metric: Any) -> np.ndarray:
    """The per-step uncertainty of the alternative samples stored in ``run`` (made with ``samples_per_step`` > 0)
    under ``metric`` (a ``metrics`` name, ``{"name", ...params}`` or an instance) — a rescoring, no model calls;
    shape (L,). Logprob-based metrics need the logprobs, which the run does not store: use them at run time."""
    from ..semantic.samples import SampleSet

    metric = registry.resolve("metrics", metric, what="metric")
    out = np.full(len(run.steps), math.nan)
    for i, s in enumerate(run.steps):
        if s.samples:
            out[i] = float(metric.score(SampleSet.from_texts(list(s.samples), None, "")).uncertainty)
    return out


def draw_uncertainty_curves(curves: Mapping[str, Sequence[float]], m: int, *, ax: Any = None):
    """Per-step discrete semantic entropy of ``m`` alternative samples, one curve per judge (``{label: values}``),
    with ln m — every sample its own meaning — as a wide pale band under them. Equal values stay visible: the
    curves are dodged sideways by a fraction of a step, with a marker each, and joined by translucent lines.
    Returns (Figure, Axes)."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    if ax is None:
        fig, ax = plt.subplots(figsize=(9, 3.6), constrained_layout=True)
    else:
        fig = ax.figure
    top = math.log(m) if m > 1 else 1.0
    ax.axhline(top, color="0.6", lw=9, alpha=0.35, zorder=0,
               label=f"ln {m} = {top:.2f}: all {m} samples mean different things")
    length = max((len(v) for v in curves.values()), default=0)
    for i, (label, values) in enumerate(curves.items()):
        x = np.arange(1, len(values) + 1) + (i - (len(curves) - 1) / 2) * 0.1
        ax.plot(x, values, color=f"C{i}", lw=1.5, alpha=0.6)
        ax.plot(x, values, color=f"C{i}", ls="none", marker="osD^v"[i % 5], ms=6, label=label)
    ax.set_xlim(0.5, length + 0.5)
    ax.set_ylim(-0.1, top + 0.25)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("step t (the judges' points side by side)")
    ax.set_ylabel("discrete semantic entropy (nats)")
    ax.set_title(f"per-step semantic uncertainty of {m} alternative samples", fontsize="medium")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    return fig, ax
