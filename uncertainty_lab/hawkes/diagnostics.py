"""Goodness of fit and pictures.

Time-rescaling theorem: if the model is right, the compensator increments between consecutive events of
node i, ξ_{i,k} = Λ_i(τ^i_k) − Λ_i(τ^i_{k−1}) (with τ^i_0 = t0), are i.i.d. Exp(1). :func:`ks_test` tests
this per node (Kolmogorov–Smirnov against Exp(1)) and corrects for testing N nodes at once
(``statsmodels.stats.multitest.multipletests``, Holm by default). A node with fewer than ``min_events``
residuals (default :data:`MIN_EVENTS`) is not tested: one event at t0 has ξ = 0 and KS = 1, a verdict on the
data's start, not on the model. The plots return (Figure, Axes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from ..table import Table
from .errors import HawkesError
from .events import EventStream
from .model import HawkesModel

__all__ = [
    "MIN_EVENTS",
    "KSResult",
    "ks_test",
    "plot_branching_matrix",
    "plot_intensity",
    "plot_qq",
    "source_target_heatmap",
    "time_rescaling_residuals",
]


#: the fewest residuals a node needs for its KS test; below this it is listed as not tested, with the reason
MIN_EVENTS = 5


def _check(model: Any, stream: Any) -> None:
    if not isinstance(model, HawkesModel):
        raise HawkesError(f"model must be a HawkesModel, got {type(model).__name__}")
    if not isinstance(stream, EventStream):
        raise HawkesError(f"stream must be an EventStream, got {type(stream).__name__}")
    if stream.n_nodes != model.n_nodes:
        raise HawkesError(f"stream has n_nodes={stream.n_nodes}, the model has {model.n_nodes}")


def time_rescaling_residuals(model: HawkesModel, stream: EventStream) -> list[np.ndarray]:
    """Per node i, the compensator increments ξ_{i,k} = Λ_i(τ^i_k) − Λ_i(τ^i_{k−1}), τ^i_0 = start_time;
    Exp(1) under the model (one array per node, length = that node's event count)."""
    _check(model, stream)
    lam = model.compensator(stream.times, stream) if stream.n_events else np.zeros((0, model.n_nodes))
    out = []
    for i in range(model.n_nodes):
        at = lam[stream.nodes == i, i]
        out.append(np.diff(np.concatenate([[0.0], at])))
    return out


@dataclass
class KSResult:
    """Per-node KS tests of the rescaled inter-event times against Exp(1), multiplicity-corrected."""

    statistic: np.ndarray
    pvalue: np.ndarray
    pvalue_adjusted: np.ndarray
    reject: np.ndarray
    n: np.ndarray
    method: str
    level: float
    residuals: list
    min_events: int = MIN_EVENTS

    @property
    def passed(self) -> bool:
        """True when no tested node's test rejects at the corrected level (untested nodes never reject)."""
        return not bool(np.any(self.reject))

    @property
    def tested(self) -> np.ndarray:
        """Which nodes were tested: those with at least ``min_events`` residuals."""
        return self.n >= max(1, self.min_events)

    def note(self, i: int) -> str:
        """Why node ``i`` was not tested ("" when it was)."""
        if self.tested[i]:
            return ""
        return "no events: not tested" if self.n[i] == 0 else \
            f"too few events ({int(self.n[i])} < {self.min_events}): not tested"

    @property
    def table(self) -> Table:
        rows = [
            {"node": i, "n": int(self.n[i]), "KS": self.statistic[i], "p": self.pvalue[i],
             f"p_{self.method}": self.pvalue_adjusted[i], "reject": bool(self.reject[i]), "note": self.note(i)}
            for i in range(self.n.size)
        ]
        return Table(rows, title=f"time-rescaling KS test vs Exp(1), {self.method}-corrected at {self.level:g}")

    def verdict(self) -> str:
        """"model not rejected" / "model REJECTED", with how many nodes were not tested and why."""
        skipped = int((~self.tested).sum())
        if not self.tested.any():
            return f"not tested (no node has {self.min_events} events or more)"
        text = "model not rejected" if self.passed else "model REJECTED"
        return text + (f" ({skipped} node(s) with fewer than {self.min_events} events not tested)" if skipped else "")

    def __repr__(self) -> str:
        return f"KSResult: {self.verdict()}\n{self.table!r}"

    def _repr_html_(self) -> str:
        verdict = self.verdict().replace("REJECTED", "<b>rejected</b>")
        return f"<p>KS goodness of fit: {verdict}</p>" + self.table._repr_html_()


def ks_test(model: HawkesModel, stream: EventStream, *, method: str = "holm", level: float = 0.05,
            min_events: int = MIN_EVENTS) -> KSResult:
    """KS test per node of the time-rescaling residuals against Exp(1), with the p-values corrected for
    the simultaneous tests by ``multipletests(method=...)`` (Holm by default). A node with fewer than
    ``min_events`` residuals is not tested (p = NaN, never rejected; the table's ``note`` says why)."""
    from statsmodels.stats.multitest import multipletests

    if isinstance(min_events, bool) or not isinstance(min_events, int) or min_events < 1:
        raise HawkesError(f"min_events must be a positive integer, got {min_events!r}")
    residuals = time_rescaling_residuals(model, stream)
    n = np.array([r.size for r in residuals])
    stat = np.full(n.size, np.nan)
    p = np.full(n.size, np.nan)
    for i, r in enumerate(residuals):
        if r.size >= min_events:
            res = stats.kstest(r, "expon")
            stat[i], p[i] = res.statistic, res.pvalue
    adj = np.full(n.size, np.nan)
    reject = np.zeros(n.size, dtype=bool)
    tested = ~np.isnan(p)
    if tested.any():
        rej, padj, _, _ = multipletests(p[tested], alpha=level, method=method)
        adj[tested], reject[tested] = padj, rej
    return KSResult(stat, p, adj, reject, n, method, level, residuals, min_events)


def _axes(ax, **kw):
    import matplotlib.pyplot as plt

    if ax is None:
        fig, ax = plt.subplots(**kw, layout="constrained")  # room for a legend outside the axes
        return fig, ax
    return ax.figure, ax


def _names(stream: EventStream | None, n: int, node_names) -> list[str]:
    if node_names is not None:
        return [str(x) for x in node_names]
    if stream is not None and stream.node_names:
        return list(stream.node_names)
    return [f"node {i}" for i in range(n)]


def plot_qq(model: HawkesModel, stream: EventStream, *, ax=None, node_names=None):
    """Q–Q plot of each node's time-rescaling residuals against Exp(1) quantiles; on the diagonal if the
    model fits. Returns (Figure, Axes)."""
    residuals = time_rescaling_residuals(model, stream)
    fig, ax = _axes(ax, figsize=(5, 5))
    names = _names(stream, model.n_nodes, node_names)
    top = 0.0
    for i, r in enumerate(residuals):
        if not r.size:
            continue
        x = np.sort(r)
        q = stats.expon.ppf((np.arange(1, x.size + 1) - 0.5) / x.size)
        ax.plot(q, x, ".", ms=3, label=f"{names[i]} (n={x.size})")
        top = max(top, q[-1], x[-1])
    ax.plot([0, top], [0, top], "k--", lw=1, label="y = x")
    ax.set_xlabel("Exp(1) quantile")
    ax.set_ylabel("rescaled inter-event time ξ")
    ax.set_title("time-rescaling Q–Q plot")
    ax.legend(fontsize="small")
    return fig, ax


def plot_intensity(
    model: HawkesModel,
    stream: EventStream,
    *,
    nodes=None,
    t_range: tuple[float, float] | None = None,
    n_points: int = 2000,
    ax=None,
    node_names=None,
):
    """λ_i(t) over time for the chosen nodes (sawtooth: evaluated on a grid and just before and after every
    event), with each node's events as ticks under its curve; the legend to the right of the axes, where it hides
    no curve. Returns (Figure, Axes)."""
    _check(model, stream)
    lo, hi = t_range if t_range is not None else (stream.start_time, stream.end_time)
    if not hi > lo:
        raise HawkesError(f"t_range must satisfy start < end, got {(lo, hi)}")
    chosen = list(range(model.n_nodes)) if nodes is None else [int(i) for i in np.atleast_1d(nodes)]
    ev = stream.times[(stream.times >= lo) & (stream.times <= hi)]
    grid = np.unique(np.concatenate([np.linspace(lo, hi, n_points), ev]))
    left = model.intensity(grid, stream)
    right = model.intensity(ev, stream, right=True) if ev.size else np.zeros((0, model.n_nodes))
    t_all = np.concatenate([grid, ev])
    order = np.lexsort((np.concatenate([np.zeros(grid.size), np.ones(ev.size)]), t_all))
    lam = np.concatenate([left, right])[order]
    t_all = t_all[order]
    fig, ax = _axes(ax, figsize=(9, 3.5))
    names = _names(stream, model.n_nodes, node_names)
    ymax = float(lam[:, chosen].max()) if lam.size else 1.0
    for k, i in enumerate(chosen):
        (line,) = ax.plot(t_all, lam[:, i], lw=1, label=names[i])
        mine = stream.times[(stream.nodes == i) & (stream.times >= lo) & (stream.times <= hi)]
        y = -0.04 * ymax * (k + 1)
        ax.plot(mine, np.full(mine.size, y), "|", color=line.get_color(), ms=6)
    pad = 0.01 * (hi - lo)  # an event tick at either end shows whole
    ax.set_xlim(lo - pad, hi + pad)
    ax.set_xlabel("time")
    ax.set_ylabel("intensity λ_i(t)")
    ax.set_title("conditional intensity (ticks: events)")
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    return fig, ax


def plot_branching_matrix(model_or_G: Any, *, ax=None, node_names=None, annotate: bool = True):
    """Heat-map of the branching matrix G (rows: source j, columns: target i), annotated with each
    G_{j,i} and titled with ρ(G). Accepts a HawkesModel or a matrix. Returns (Figure, Axes)."""
    if isinstance(model_or_G, HawkesModel):
        G = model_or_G.branching_matrix()
    else:
        G = np.asarray(model_or_G, dtype=float)
        if G.ndim != 2 or G.shape[0] != G.shape[1]:
            raise HawkesError(f"G must be a square matrix, got shape {G.shape}")
    rho = float(np.max(np.abs(np.linalg.eigvals(G)))) if G.size else 0.0
    n = G.shape[0]
    fig, ax = _axes(ax, figsize=(1.2 * n + 2.5, 1.1 * n + 1.5))
    source_target_heatmap(ax, G, _names(None, n, node_names), cmap="viridis", label="G = expected direct offspring",
                          xlabel="target i", ylabel="source j", annotate=annotate)
    ax.set_title(f"branching matrix G (source → target), ρ(G) = {rho:.3f} " + ("(stable)" if rho < 1 else "(UNSTABLE)"))
    return fig, ax


def source_target_heatmap(ax, matrix: np.ndarray, names: list[str], *, cmap: str, label: str, xlabel: str, ylabel: str,
                          annotate: bool = True) -> None:
    """Draw a node × node matrix on ``ax`` as a heat-map, rows = source j and columns = target i (``matrix[j, i]``),
    with a colour bar called ``label``, the node names on both axes and, with ``annotate``, each cell's value."""
    n = matrix.shape[0]
    im = ax.imshow(matrix, cmap=cmap, vmin=0.0)
    ax.figure.colorbar(im, ax=ax, label=label)
    ax.set_xticks(range(n), names, rotation=45, ha="right")
    ax.set_yticks(range(n), names)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if annotate:
        top = matrix.max() if matrix.size else 0.0
        for j in range(n):
            for i in range(n):
                ax.text(i, j, f"{matrix[j, i]:.2f}", ha="center", va="center",
                        color="black" if matrix[j, i] > 0.6 * top else "white", fontsize="small")
