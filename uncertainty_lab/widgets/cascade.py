"""Notebook 02's selector explorer: a short HawkesLLM cascade simulated, evaluated and compared live.

The decisions live in plain functions a test can call without a browser:

- :func:`run_panel` — the explorer's whole computation: simulate a short cascade with the chosen selector, k,
  steps, temperature and backend from the experiment's setup, evaluate it, tabulate it (:class:`PanelResult`);
- :func:`comparison_table` / :func:`draw_panel` — every run so far side by side; S_t of the latest results and
  the current run's drifts.

:class:`CascadeExplorer` (from :func:`cascade_explorer`) only wires ``run_panel`` to controls. Every run is
kept, so the comparison table grows as a learner switches selector or k. Figures go to an ``ipywidgets.Image``
as PNG (not an ``Output`` widget; see :mod:`uncertainty_lab.widgets.hawkes` for why). The views of one run
(:mod:`uncertainty_lab.widgets.cascade_views`: the fit pictures, the memory, steps and samples tables) are
importable from here too.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import ipywidgets as widgets
import numpy as np

from .. import registry
from ..table import Table
from .cascade_views import (
    draw_uncertainty_curves,
    memory_table,
    plot_alpha,
    plot_beta_grid,
    prompt_text,
    rounded,
    samples_table,
    steps_table,
    uncertainty_curve,
)
from .controls import png_bytes
from .hawkes import SliderRange

__all__ = [
    "BACKENDS",
    "RANGES",
    "CascadeExplorer",
    "PanelResult",
    "cascade_explorer",
    "comparison_table",
    "draw_panel",
    "draw_uncertainty_curves",
    "memory_table",
    "plot_alpha",
    "plot_beta_grid",
    "prompt_text",
    "run_panel",
    "samples_table",
    "steps_table",
    "uncertainty_curve",
]

#: the explorer's slider ranges (k: memory budget; steps: cascade length L; temperature of the generator)
RANGES: dict[str, SliderRange] = {
    "k": SliderRange(1, 7, 1, 3),
    "steps": SliderRange(1, 12, 1, 4),
    "temperature": SliderRange(0.0, 1.5, 0.05, 0.35),
}
#: the backend choices offered (any ``get_llm`` spec works in :func:`run_panel`)
BACKENDS: tuple[str, ...] = ("embedded", "auto", "ollama:qwen2.5:3b")
_STYLE = {"description_width": "initial"}
_SHOWN = 6  # runs drawn in the comparison panel


# --- the explorer's computation ----------------------------------------------------------------------------------


@dataclass
class PanelResult:
    """One explorer run: the :class:`~uncertainty_lab.cascade.CascadeRun`, its diagnostics, the step table and a
    summary (``selector, k, steps, temperature, backend, mean_S, late_S, trend, global_drift, local_drift,
    memory_empty, copies, copies_memory, memory_sizes``)."""

    run: Any
    diagnostics: Any
    table: Table
    summary: dict[str, Any]
    settings: dict[str, Any] = field(default_factory=dict)

    def _repr_html_(self) -> str:
        s = self.summary
        head = (f"<b>{html.escape(str(s['selector']))}, k = {s['k']}, {s['steps']} steps, T = {s['temperature']:g}</b> "
                f"<small>({html.escape(str(s['backend']))})</small><br><small>mean S = {s['mean_S']:.3f}, "
                f"late S = {s['late_S']:.3f} ({html.escape(s['trend'])}), global drift {s['global_drift']:.3f}, "
                f"local drift {s['local_drift']:.3f}, copies {s['copies']:.0%}</small>")
        return head + self.table._repr_html_()


def _backend(backend: Any) -> Any:
    from ..llm import ready_backend

    return ready_backend(backend, what="backend", check_timeout=5.0)


def _spec_of(llm: Any) -> str:
    """The ``get_llm`` spec that names ``llm``: ``embedded``, or ``name:model`` (``ollama:qwen2.5:3b``)."""
    name = getattr(llm, "name", type(llm).__name__)
    if name == "embedded":
        return name
    model = llm.model_id() if callable(getattr(llm, "model_id", None)) else getattr(llm, "model", "")
    return f"{name}:{model}" if model else str(name)


def _summary(run: Any, diagnostics: Any, settings: dict[str, Any]) -> dict[str, Any]:
    from ..cascade.memory_use import memory_use

    a = diagnostics.summaries.get("alignment")
    return {
        **settings,
        "steps": len(run),
        "mean_S": a.mean if a else math.nan, "late_S": a.late_mean if a else math.nan,
        "trend": a.trend.label if a else "undetermined",
        "global_drift": diagnostics.summaries["global_drift"].mean,
        "local_drift": diagnostics.summaries["local_drift"].mean,
        **memory_use(run),
        "memory_sizes": [len(s.memory) for s in run.steps],
    }


def run_panel(setup: Any, selector: str = "hawkes", k: int = 3, steps: int = 4, temperature: float = 0.35,
              backend: Any = "embedded", *, seed: int = 0, max_tokens: int = 24, top_p: float = 0.9,
              embedder: Any = None, prompt: str = "headline", clean: bool = True, out: Any = None) -> PanelResult:
    """Simulate ``steps`` steps of the cascade from ``setup`` (a :func:`~uncertainty_lab.cascade.experiment.prepare`
    result: the fitted model, seed event, node specs, held-out references) with memory ``selector`` (a
    ``memory_selectors`` name) and budget ``k`` at ``temperature`` on ``backend`` (a ``get_llm`` spec or a backend),
    then evaluate it (S_t against the held-out headlines, global and local drift) with ``embedder`` (default
    all-MiniLM-L6-v2). ``k``, ``steps`` and ``temperature`` must lie in :data:`RANGES`. Runs with the same
    ``seed`` share the event schedule, so switching the selector changes only the memory. Nothing is written
    unless ``out`` (a JSONL path) is given; every model answer is cached.
    """
    from ..cascade import PROMPTS, clean_headline, evaluate_run, simulate_cascade

    registry.get("memory_selectors", selector)  # an unknown name raises now, naming the choices and the closest
    RANGES["k"].check("k", k, int)
    RANGES["steps"].check("steps", steps, int)
    RANGES["temperature"].check("temperature", temperature, float)
    if prompt not in PROMPTS:
        raise ValueError(f"prompt must be one of {list(PROMPTS)}, got {prompt!r}")
    llm = _backend(backend)
    if embedder is None:
        from ..embeddings import Embedder

        embedder = Embedder()
    sel = registry.resolve("memory_selectors", selector)
    if getattr(sel, "embedder", "x") is None:
        sel.embedder = embedder
    run = simulate_cascade(setup.seed_event, setup.model, sel, llm, steps=int(steps), k=int(k), seed=int(seed),
                           node_specs=setup.node_specs, prompt_fn=PROMPTS[prompt], temperature=float(temperature),
                           top_p=top_p, max_tokens=int(max_tokens), out=out, resume=False, progress=False,
                           postprocess=clean_headline if clean else None)
    diagnostics = evaluate_run(run, setup.references, embedder=embedder)
    settings = {"selector": selector, "k": int(k), "temperature": float(temperature), "seed": int(seed),
                "backend": getattr(llm, "label", type(llm).__name__), "max_tokens": int(max_tokens)}
    table = steps_table(run, diagnostics, title=f"{selector}, k = {k}, T = {temperature:g}")
    return PanelResult(run, diagnostics, table, _summary(run, diagnostics, settings), settings)


def comparison_table(results: Sequence[PanelResult]) -> Table:
    """One row per explorer run (oldest first): settings and summaries side by side."""
    rows = []
    for n, r in enumerate(results, start=1):
        s = r.summary
        rows.append({"#": n, "selector": s["selector"], "k": s["k"], "steps": s["steps"], "T": s["temperature"],
                     "backend": s["backend"], "mean S": rounded(s["mean_S"]), "late S": rounded(s["late_S"]),
                     "trend": s["trend"], "global drift": rounded(s["global_drift"]),
                     "local drift": rounded(s["local_drift"]),
                     "copies": f"{s['copies']:.0%}" if math.isfinite(s["copies"]) else "—"})
    return Table(rows, ["#", "selector", "k", "steps", "T", "backend", "mean S", "late S", "trend", "global drift",
                        "local drift", "copies"], title="runs so far")


def draw_panel(results: Sequence[PanelResult], *, late_fraction: float = 1 / 3):
    """Left: S_t of the last few results (the current one bold; each result's points dodged sideways so equal
    values stay visible), late window of the current one shaded. Right: the current run's global and local drift
    per step (1 − cos, in [0, 2]). Legends sit outside the plotting area. Returns the Figure."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    if not results:
        raise ValueError("draw_panel needs at least one PanelResult")
    fig, (ax_s, ax_d) = plt.subplots(1, 2, figsize=(12, 3.8), constrained_layout=True)
    shown = list(results)[-_SHOWN:]
    first = len(results) - len(shown) + 1
    current = shown[-1]
    L = len(current.run)
    if L:
        late_start = L - max(1, math.ceil(late_fraction * L)) + 1
        ax_s.axvspan(late_start - 0.5, L + 0.5, color="0.92", zorder=0, label="late window")
    for i, (n, r) in enumerate(enumerate(shown, start=first)):
        v = r.diagnostics.curves["alignment"].values
        bold = r is current
        s = r.summary
        x = np.arange(1, v.size + 1) + (i - (len(shown) - 1) / 2) * 0.1
        ax_s.plot(x, v, color=f"C{i}", lw=2.2 if bold else 1, alpha=0.6)
        ax_s.plot(x, v, color=f"C{i}", ls="none", marker="osD^v"[i % 5], ms=5 if bold else 3.5,
                  label=f"#{n} {s['selector']}, k={s['k']}, T={s['temperature']:g}")
    for ax in (ax_s, ax_d):
        ax.set_xlim(0.5, max(L, 1) + 0.5)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax_s.set_xlabel("step t")
    ax_s.set_ylabel("S_t (alignment)")
    ax_s.set_title("alignment with the held-out headlines", fontsize="medium")
    ax_s.grid(alpha=0.3)
    ax_s.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    for j, (key, label) in enumerate((("global_drift", "global drift (from the seed)"),
                                      ("local_drift", "local drift (from the memory)"))):
        v = current.diagnostics.curves[key].values
        x = np.arange(1, v.size + 1) + (j - 0.5) * 0.1
        ax_d.plot(x, v, color=f"C{j}", lw=1.5, alpha=0.6)
        ax_d.plot(x, v, color=f"C{j}", ls="none", marker="os"[j], ms=4, label=label)
    ax_d.set_xlabel("step t")
    ax_d.set_ylabel("1 − cosine (0 to 2)")
    ax_d.set_title(f"drift of run #{len(results)}", fontsize="medium")
    ax_d.grid(alpha=0.3)
    ax_d.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    return fig


# --- the widget -----------------------------------------------------------------------------------------------


class CascadeExplorer(widgets.VBox):
    """Controls for the selector, k, steps, temperature, backend and seed, and a Run button, over
    :func:`run_panel` from a prepared ``setup``. Every run is kept (``.results``) and compared in a table and a
    figure; ``.run()`` does what the button does and returns the :class:`PanelResult` (None on an error, which
    is shown in ``.status``)."""

    def __init__(self, setup: Any, *, selector: str = "hawkes", backend: str = "embedded", seed: int = 0,
                 max_tokens: int = 24, embedder: Any = None, dpi: int = 90, llm: Any = None, **values: float):
        super().__init__()
        self._llms: dict[str, Any] = {}
        if llm is not None:  # a backend the notebook already has: offered under its spec, and chosen
            backend = _spec_of(llm)
            self._llms[backend] = llm
        unknown = set(values) - set(RANGES)
        if unknown:
            raise ValueError(f"unknown control(s) {sorted(unknown)}; the sliders are {list(RANGES)}")
        self.setup, self.max_tokens, self.embedder, self.dpi = setup, int(max_tokens), embedder, int(dpi)
        names = registry.names("memory_selectors")
        if selector not in names:
            registry.get("memory_selectors", selector)
        self.selector = widgets.Dropdown(options=names, value=selector, description="selector", style=dict(_STYLE))
        self.sliders: dict[str, widgets.ValueWidget] = {}
        for name, r in RANGES.items():
            value = values.get(name, r.value)
            RANGES[name].check(name, value, float if name == "temperature" else int)
            if name == "temperature":
                self.sliders[name] = widgets.FloatSlider(value=float(value), min=r.min, max=r.max, step=r.step,
                                                         description=name, readout_format=".2f",
                                                         continuous_update=False, style=dict(_STYLE))
            else:
                self.sliders[name] = widgets.IntSlider(value=int(value), min=int(r.min), max=int(r.max),
                                                       step=int(r.step), description=name,
                                                       continuous_update=False, style=dict(_STYLE))
        options = list(dict.fromkeys([backend, *BACKENDS]))
        self.backend = widgets.Combobox(value=backend, options=options, description="backend", ensure_option=False,
                                        placeholder="embedded, auto or ollama:<model>", style=dict(_STYLE))
        self.seed = widgets.BoundedIntText(value=int(seed), min=0, max=10**6, description="seed",
                                           layout={"width": "160px"})
        self.run_button = widgets.Button(description="Run", button_style="primary", icon="play")
        self.run_button.on_click(self._on_run)
        self.status = widgets.HTML()
        self.steps_html = widgets.HTML()
        self.compare_html = widgets.HTML()
        self.image = widgets.Image(format="png", layout={"max_width": "100%"})
        self.results: list[PanelResult] = []
        note = widgets.HTML("<small style='color:#666'>Same seed = same event schedule (times and nodes): switching "
                            "the selector changes only the memory. Answers are cached, so repeating a setting is "
                            "instant. ollama:&lt;model&gt; needs a running server (OLLAMA_HOST).</small>")
        self.children = (
            widgets.HBox([widgets.VBox([self.selector, self.backend, self.seed]),
                          widgets.VBox(list(self.sliders.values()))]),
            note, self.run_button, self.status, self.compare_html, self.image, self.steps_html)

    @property
    def values(self) -> dict[str, Any]:
        """The arguments the Run button passes to :func:`run_panel`."""
        return {"selector": self.selector.value, "k": int(self.sliders["k"].value),
                "steps": int(self.sliders["steps"].value),
                "temperature": round(float(self.sliders["temperature"].value), 6),
                "backend": self.backend.value.strip(), "seed": int(self.seed.value)}

    def _on_run(self, button: Any = None) -> None:
        self.run()

    def _llm(self, spec: str) -> Any:
        if spec not in self._llms:
            self._llms[spec] = _backend(spec)
        return self._llms[spec]

    def run(self) -> PanelResult | None:
        """Simulate, evaluate and show with the current controls; returns the result (None on an error)."""

        v = self.values
        self.status.value = "<i>generating…</i>"
        try:
            llm = self._llm(v.pop("backend"))
            result = run_panel(self.setup, backend=llm, max_tokens=self.max_tokens, embedder=self.embedder, **v)
        except Exception as exc:  # a bad setting or a missing server must be shown, not lost in the kernel's log
            self.status.value = (f"<span style='color:#a33'><b>{html.escape(type(exc).__name__)}</b>: "
                                 f"{html.escape(str(exc))}</span>")
            return None
        self.results.append(result)
        self.image.value = png_bytes(draw_panel(self.results), self.dpi)
        s = result.summary
        self.status.value = (f"<small>run #{len(self.results)}: {html.escape(s['selector'])}, k = {s['k']}, "
                             f"{s['steps']} steps on {html.escape(s['backend'])}; memory sizes {s['memory_sizes']}"
                             "</small>")
        self.compare_html.value = comparison_table(self.results)._repr_html_()
        self.steps_html.value = result._repr_html_()
        return result


def cascade_explorer(setup: Any, **options: Any) -> CascadeExplorer:
    """The selector explorer over a prepared cascade ``setup``; ``options``: ``selector``, ``backend``, ``seed``,
    ``max_tokens``, ``embedder`` and starting slider values (``k``, ``steps``, ``temperature``)."""
    return CascadeExplorer(setup, **options)
