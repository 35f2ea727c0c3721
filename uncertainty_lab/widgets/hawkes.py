"""Self-excitation by intuition: a univariate Hawkes process with sliders for μ, α and β.

    λ(t) = μ + Σ_{τ_m < t} α e^{-β(t − τ_m)},   branching ratio n = α/β   (paper §2.2 with one node)

Each event adds α to the intensity, and that bump decays at rate β; on average one event has n = α/β
direct offspring. n < 1: the process settles to the stationary mean rate μ/(1 − n) ("stable"); n ≥ 1: each
event begets at least one more on average, and the count grows without a stationary regime ("explosive").

The decisions live in plain functions a test can call without a browser:

- :func:`stability` — n = α/β and its label;
- :func:`expected_count` — E[N(t)] for a process started empty at 0 (exact, for any n);
- :func:`draw_univariate` — simulate (capped at ``max_events``, so explosive settings stay finite and fast)
  and draw λ(t) with the events as a rug and N(t) against E[N(t)]; returns the figure and a summary dict;
- :func:`status_html` — the live "n = … — stable / explosive" line.

:class:`UnivariateExplorer` (from :func:`univariate_explorer`) only wires these to sliders. It shows each
drawing as a PNG in an ``ipywidgets.Image`` rather than through an ``Output`` widget: a figure displayed into an
``Output`` while a cell runs made headless execution (nbclient with ipykernel 7) stall until the cell timeout in
about a third of runs here; the Image route sends the picture as widget state and never did.
"""

from __future__ import annotations

import html
import math
from typing import Any

import ipywidgets as widgets
import numpy as np

from .controls import SliderRange, png_bytes

__all__ = [
    "MAX_EVENTS",
    "RANGES",
    "SliderRange",
    "UnivariateExplorer",
    "draw_univariate",
    "expected_count",
    "stability",
    "status_html",
    "univariate_explorer",
]

#: the most events one drawing simulates: an explosive setting stops here instead of running for ever
MAX_EVENTS = 5000


#: the explorer's slider ranges; α at its top with β at its bottom is deliberately explosive (n = 20)
RANGES: dict[str, SliderRange] = {
    "mu": SliderRange(0.1, 1.9, 0.1, 0.5),
    "alpha": SliderRange(0.0, 4.0, 0.1, 0.8),
    "beta": SliderRange(0.2, 4.0, 0.1, 1.0),
}

_SYMBOL = {"mu": "μ (background rate)", "alpha": "α (jump per event)", "beta": "β (decay rate)"}


def _check(mu: float, alpha: float, beta: float, T: float) -> tuple[float, float, float, float]:
    out = []
    for name, value, positive in (("mu", mu, False), ("alpha", alpha, False), ("beta", beta, True),
                                  ("T", T, True)):
        try:
            x = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be a number, got {value!r}") from None
        if not math.isfinite(x) or x < 0 or (positive and x == 0):
            raise ValueError(f"{name} must be a finite number {'> 0' if positive else '>= 0'}, got {value!r}")
        out.append(x)
    return tuple(out)  # type: ignore[return-value]


def stability(alpha: float, beta: float) -> tuple[float, str]:
    """(n, label): the branching ratio n = α/β (= ρ(G) for one node) and ``"stable"`` when n < 1, else
    ``"explosive"`` (n = 1 is the critical boundary: no stationary regime either)."""
    n = float(alpha) / float(beta)
    return n, ("stable" if n < 1.0 else "explosive")


def expected_count(mu: float, alpha: float, beta: float, t: Any) -> Any:
    """E[N(t)] for the process started with no events at time 0 — exact for every n = α/β.

    The mean intensity m(t) = E λ(t) solves m' = βμ − (β − α) m, m(0) = μ, so with x = β − α
    m(t) = μ + μ n/(1 − n) (1 − e^{−xt}) and E[N(t)] = μ t + μ n/(1 − n) (t − (1 − e^{−xt})/x)
    (→ μ t + βμ t²/2 at n = 1). For n < 1 the slope tends to the stationary rate μ/(1 − n); for n > 1
    the count grows like e^{(α − β)t} (inf where that overflows a float).
    """
    t_arr = np.asarray(t, dtype=float)
    mu, alpha, beta = float(mu), float(alpha), float(beta)
    x = beta - alpha
    y = x * t_arr
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        # μ n/(1 − n) · (t − (1 − e^{−y})/x) = μ α (t + expm1(−y)/x)/x, and its series where |y| is tiny
        direct = mu * alpha * (t_arr + np.expm1(-y) / x) / x if x != 0.0 else np.zeros_like(t_arr)
        series = mu * alpha * t_arr * t_arr / 2 * (1 - y / 3 + y * y / 12)
        out = mu * t_arr + np.where(np.abs(y) < 1e-4, series, direct)
    return float(out) if out.ndim == 0 else out


def draw_univariate(
    mu: float,
    alpha: float,
    beta: float,
    T: float = 100.0,
    seed: int = 0,
    ax: Any = None,
    *,
    max_events: int = MAX_EVENTS,
    n_points: int = 1500,
) -> tuple[Any, dict[str, Any]]:
    """Simulate λ(t) = μ + Σ α e^{-β(t − τ_m)} on [0, T] (Ogata thinning, at most ``max_events`` events) and
    draw it: the intensity with the events as a rug, and the count N(t) against E[N(t)].

    ``ax``: None (a new figure with two panels), one Axes (the intensity panel only) or two Axes.
    Returns ``(figure, summary)``; the summary holds ``mu, alpha, beta, T, seed``, ``branching_ratio`` (n),
    ``label`` ("stable"/"explosive"), ``stable``, ``n_events``, ``capped`` (the run stopped at
    ``max_events`` before T), ``end_time`` (where it stopped), ``expected_events`` (E[N(T)]),
    ``expected_at_end`` (E[N(end_time)]), ``stationary_rate`` (μ/(1 − n), inf when explosive),
    ``empirical_rate`` (n_events / end_time) and ``max_intensity``.
    """
    mu, alpha, beta, T = _check(mu, alpha, beta, T)
    model, stream, summary = _simulate(mu, alpha, beta, T, seed, int(max_events))
    fig, axes = _axes(ax)
    _draw_intensity(axes[0], model, stream, summary, n_points, int(max_events))
    if len(axes) > 1:
        _draw_count(axes[1], stream, summary)
        axes[0].set_xlabel("")
    return fig, summary


def _simulate(mu: float, alpha: float, beta: float, T: float, seed: int, max_events: int) -> tuple[Any, Any, dict]:
    """The model, its simulated stream (capped at ``max_events``) and the summary :func:`draw_univariate` returns."""
    from ..hawkes import HawkesModel, simulate

    n, label = stability(alpha, beta)
    model = HawkesModel.exponential([mu], [[alpha]], beta)
    # allow_unstable with a bound: an explosive setting is simulated until max_events, then stops
    stream = simulate(model, T=T, max_events=max_events, seed=seed, allow_unstable=True)
    end = float(stream.end_time) if stream.n_events else T
    capped = stream.n_events >= max_events and end < T
    summary: dict[str, Any] = {
        "mu": mu, "alpha": alpha, "beta": beta, "T": T, "seed": seed,
        "branching_ratio": n, "label": label, "stable": label == "stable",
        "n_events": stream.n_events, "capped": bool(capped), "end_time": end,
        "expected_events": expected_count(mu, alpha, beta, T),
        "expected_at_end": expected_count(mu, alpha, beta, end),
        "stationary_rate": mu / (1.0 - n) if n < 1.0 else math.inf,
        "empirical_rate": stream.n_events / end if end > 0 else math.nan,
    }
    lam_at_events = model.intensity(stream.times, stream, right=True)[:, 0] if stream.n_events else np.zeros(0)
    summary["max_intensity"] = float(max(mu, lam_at_events.max())) if lam_at_events.size else mu
    return model, stream, summary


def _axes(ax: Any) -> tuple[Any, list[Any]]:
    """(figure, axes): a new two-panel figure for None, else the given Axes (one, or a sequence)."""
    import matplotlib.pyplot as plt

    if ax is None:
        fig, axes = plt.subplots(2, 1, figsize=(9, 5.5), sharex=True, height_ratios=[3, 2],
                                 constrained_layout=True)
        return fig, list(axes)
    axes = list(ax) if isinstance(ax, (list, tuple, np.ndarray)) else [ax]
    return axes[0].figure, axes


def _draw_intensity(ax: Any, model: Any, stream: Any, summary: dict[str, Any], n_points: int,
                    max_events: int) -> None:
    """λ(t) with the events as a rug, μ and (when stable) the stationary mean, titled with n and the stop."""
    from ..hawkes import plot_intensity

    mu, alpha, beta, T = summary["mu"], summary["alpha"], summary["beta"], summary["T"]
    n, label, end = summary["branching_ratio"], summary["label"], summary["end_time"]
    plot_intensity(model, stream, t_range=(0.0, end), n_points=n_points, ax=ax, node_names=["λ(t)"])
    if n == 0.0:  # λ(t) = μ = the stationary mean: one line says so, none hides another
        ax.axhline(mu, color="k", lw=0.8, ls="--", label=f"μ = {mu:g} = the stationary mean (α = 0)")
    else:
        ax.axhline(mu, color="grey", lw=0.8, ls=":", label=f"μ = {mu:g}")
    if 0.0 < n < 1.0:
        ax.axhline(summary["stationary_rate"], color="k", lw=0.8, ls="--",
                   label=f"stationary mean μ/(1−n) = {summary['stationary_rate']:.3g}")
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    ax.set_ylabel("intensity λ(t)")
    stop = (f"stopped at the cap of {max_events} events, t = {end:.3g} of T = {T:g}" if summary["capped"]
            else f"{stream.n_events} events on [0, {T:g}]")
    ax.set_title(f"μ = {mu:g}, α = {alpha:g}, β = {beta:g}:  n = α/β = {n:.3g}  ({label})\n{stop}",
                 fontsize="medium")


def _draw_count(ax: Any, stream: Any, summary: dict[str, Any]) -> None:
    """N(t) as a step against E[N(t)]; on a log scale when explosive (exponential growth is a straight line),
    where both start at 1 event (a log axis has no 0)."""
    end = summary["end_time"]
    times = np.concatenate([[0.0], stream.times, [end]])
    counts = np.concatenate([[0], np.arange(1, stream.n_events + 1), [stream.n_events]]).astype(float)
    grid = np.linspace(0.0, end, 400)
    expected = expected_count(summary["mu"], summary["alpha"], summary["beta"], grid)
    log = summary["label"] == "explosive" and stream.n_events > 0
    if log:
        times, counts = times[1:], counts[1:]
        grid, expected = grid[expected >= 1.0], expected[expected >= 1.0]
    ax.step(times, counts, where="post", lw=1.2, label="N(t), simulated")
    ax.plot(grid, expected, "k--", lw=1, label="E[N(t)]")
    ax.set_xlabel("time t")
    ax.set_ylabel("events so far")
    if log:
        ax.set_yscale("log")
        ax.set_ylabel("events so far (log scale)")
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)


def status_html(summary: dict[str, Any]) -> str:
    """The live line under the sliders: n = α/β, the stability label, and the counts."""
    n, label = summary["branching_ratio"], summary["label"]
    colour = "#2a7" if label == "stable" else "#c33"
    if label == "stable":
        why = f"each event has n = {n:.3g} &lt; 1 direct offspring on average; mean rate μ/(1−n) = " \
              f"{summary['stationary_rate']:.3g}"
    elif n == 1.0:
        why = "n = 1 is the critical boundary: no stationary regime, E[N(t)] grows like t²"
    else:
        why = f"each event has n = {n:.3g} ≥ 1 direct offspring on average: the count grows like e^((α−β)t)"
    count = (f"capped at {summary['n_events']} events by t = {summary['end_time']:.3g}" if summary["capped"]
             else f"{summary['n_events']} events (expected {summary['expected_events']:.4g})")
    return (f"<b>n = α/β = {n:.3g} — <span style='color:{colour}'>{html.escape(label)}</span></b>"
            f"<br><small>{why}; {html.escape(count)}</small>")


class UnivariateExplorer(widgets.VBox):
    """Sliders for μ, α, β (and a seed) over a live drawing by :func:`draw_univariate`.
    ``.sliders`` (dict), ``.seed``, ``.status`` (HTML), ``.image`` (the drawing as a PNG ``Image`` widget),
    ``.summary`` (the last drawing's); ``.redraw()`` draws again with the current values."""

    def __init__(self, *, T: float = 100.0, seed: int = 0, max_events: int = MAX_EVENTS, dpi: int = 96,
                 **values: float):
        super().__init__()
        unknown = set(values) - set(RANGES)
        if unknown:
            raise ValueError(f"unknown slider(s) {sorted(unknown)}; the sliders are {list(RANGES)}")
        self.T, self.max_events, self.dpi = float(T), int(max_events), int(dpi)
        self.sliders: dict[str, widgets.FloatSlider] = {}
        for name, r in RANGES.items():
            value = values.get(name, r.value)
            r.check(name, value)
            value = float(value)
            self.sliders[name] = widgets.FloatSlider(
                value=value, min=r.min, max=r.max, step=r.step, description=_SYMBOL[name],
                continuous_update=False, readout_format=".2f",
                style={"description_width": "initial"}, layout={"width": "420px"})
        self.seed = widgets.BoundedIntText(value=int(seed), min=0, max=10**6, description="seed",
                                           layout={"width": "160px"})
        self.status = widgets.HTML()
        self.image = widgets.Image(format="png", layout={"max_width": "100%"})
        self.summary: dict[str, Any] = {}
        for control in (*self.sliders.values(), self.seed):
            control.observe(self._on_change, names="value")
        self.children = (widgets.HBox([widgets.VBox(list(self.sliders.values())), self.seed]),
                         self.status, self.image)
        self.redraw()

    @property
    def values(self) -> dict[str, float]:
        """The current μ, α, β."""
        return {name: float(s.value) for name, s in self.sliders.items()}

    def _on_change(self, change) -> None:
        self.redraw()

    def redraw(self) -> dict[str, Any]:
        """Simulate and draw with the current values; returns (and keeps) the summary."""

        v = self.values
        fig, summary = draw_univariate(v["mu"], v["alpha"], v["beta"], T=self.T, seed=int(self.seed.value),
                                       max_events=self.max_events)
        png = png_bytes(fig, self.dpi)
        self.summary = summary
        self.image.value = png
        self.status.value = status_html(self.summary)
        return self.summary


def univariate_explorer(*, T: float = 100.0, seed: int = 0, max_events: int = MAX_EVENTS, dpi: int = 96,
                        **values: float) -> UnivariateExplorer:
    """The self-excitation explorer: sliders for μ, α, β (starting at ``values`` or :data:`RANGES`' defaults)
    redrawing a simulated path on [0, T], its intensity with the events as a rug, and n = α/β with
    "stable"/"explosive". Explosive settings stop at ``max_events``."""
    return UnivariateExplorer(T=T, seed=seed, max_events=max_events, dpi=dpi, **values)
