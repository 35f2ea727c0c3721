"""Notebook 02's "known truth" panel: the cascade lab run on a cascade world whose excitation strength a slider sets,
with the method's response shown live — memory precision and alignment per selector, α recovered.

The decisions live in plain functions a test can call without a browser:

- :func:`scaled_world` — the shipped ``excitation`` world with α scaled by ``strength`` s (0: no excitation, 1: as
  shipped) and μ set so the stationary rates stay those of the shipped world, μ = (I − s Gᵀ) Λ: only the share of
  events that are children changes (immigrant share 1 − 0.7 s), not how many events there are;
- :func:`world_panel` — that world as the lab's data and model, every selector run, evaluated and compared with
  recency run by run (:class:`WorldPanel`: a table, the α recovery, the result);
- :func:`draw_world_panel` — memory precision and late-stage S per selector (mean and 95% interval over runs).

:class:`WorldExplorer` (from :func:`world_explorer`) only wires ``world_panel`` to a slider and a Run button; the
figure goes to an ``ipywidgets.Image`` as PNG.
"""

from __future__ import annotations

import html
import math
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ipywidgets as widgets
import numpy as np

from ..table import Table
from .controls import SliderRange, png_bytes

__all__ = ["STRENGTH", "WorldExplorer", "WorldPanel", "draw_world_panel", "scaled_world", "world_explorer",
           "world_panel"]

#: the excitation strength s (α × s, ρ = 0.7 s); above ~1.08 no μ ≥ 0 keeps the shipped rates (business_finance
#: would need a negative background rate)
STRENGTH = SliderRange(0.0, 1.05, 0.05, 1.0)
SELECTORS: tuple[Any, ...] = ("hawkes", {"name": "hawkes", "ranking": "score", "label": "hawkes_score"}, "recency",
                              "random")
_HELD_OUT = 60


def scaled_world(strength: float, *, horizon_h: float = 150.0, seed: int = 2026) -> dict[str, Any]:
    """The spec of the shipped ``excitation`` world with α × ``strength`` and μ = (I − s Gᵀ) Λ (same stationary
    rates Λ as shipped), on [0, ``horizon_h``] h."""
    from ..worlds import load_world

    STRENGTH.check("strength", strength, float)
    base = load_world("excitation")
    alpha = base.alpha * float(strength)
    mu = (np.eye(len(base.nodes)) - (alpha / base.beta).T) @ base.stationary_rates
    if np.any(mu < 0):
        raise ValueError(f"strength {strength:g} is too strong to keep the shipped rates (μ would be negative)")
    return {**base.spec, "name": f"excitation_x{strength:g}", "alpha": alpha.tolist(), "mu": mu.tolist(), "horizon_h": float(horizon_h), "seed": int(seed)}


def _toml(spec: dict[str, Any]) -> str:
    def value(v: Any) -> str:
        if isinstance(v, str):
            return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (list, tuple)):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return repr(float(v)) if isinstance(v, float) else str(v)

    return "\n".join(f"{k} = {value(v)}" for k, v in spec.items()) + "\n"


@dataclass
class WorldPanel:
    """One panel run: the world's ``strength``, the lab's :class:`~uncertainty_lab.cascade.CascadeResult`, the
    per-selector ``table`` (memory precision, mean / late S, paired differences to recency) and ``recovery``
    (:func:`~uncertainty_lab.cascade.truth.alpha_recovery`)."""

    strength: float
    result: Any
    table: Table
    recovery: dict[str, Any]

    def __repr__(self) -> str:
        r = self.recovery
        return (f"WorldPanel(strength={self.strength:g}, rho={r['rho']:.2f}, alpha_error={r['alpha_error']:.3f}, "
                f"{len(self.result.runs)} runs)\n{self.table}")

    def _repr_html_(self) -> str:
        r = self.recovery
        head = (f"<b>excitation × {self.strength:g}</b>: true ρ = {r['rho']:.2f}, fitted ρ̂ = {r['rho_fit']:.2f}; "
                f"‖α̂ − α‖_F = {r['alpha_error']:.3f} (‖α‖_F = {r['alpha_norm']:.3f})")
        return head + self.table._repr_html_()


def _ci(iv: Any) -> str:
    if not math.isfinite(iv.mean):
        return "—"
    if not math.isfinite(iv.ci_low):
        return f"{iv.mean:+.3f}"
    return f"{iv.mean:+.3f} [{iv.ci_low:+.3f}, {iv.ci_high:+.3f}]"


def world_panel(strength: float = 1.0, *, runs: int = 6, steps: int = 20, embedder: Any = None, seed: int = 0,
                out_dir: str | Path | None = None) -> WorldPanel:
    """Run the cascade lab on :func:`scaled_world` (``strength``) — the world as data and as model, every selector of
    :data:`SELECTORS` × ``runs`` runs × ``steps`` steps — and tabulate per selector the memory precision, mean and
    late S, and the paired differences to recency (95% t-intervals over runs)."""
    from ..cascade.comparisons import paired_difference
    from ..cascade.experiment import run_experiment
    from ..cascade.truth import alpha_recovery
    from ..worlds.cascade import load_world_cascade

    folder = Path(out_dir) if out_dir is not None else Path(tempfile.mkdtemp(prefix="ul_world_"))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"world_x{strength:g}.toml"
    path.write_text(_toml(scaled_world(strength)), encoding="utf-8")
    n_events = len(load_world_cascade(str(path)))
    config = {"selectors": list(SELECTORS), "ks": [3], "runs": int(runs), "steps": int(steps), "seed": int(seed),
              "llm": f"world:{path}", "data": {"loader": "world", "path": str(path)}, "prompt": "default",
              "clean": False, "n_train": n_events - _HELD_OUT, "out_dir": str(folder / "runs"), "overwrite": True,
              "progress": False, "penalty": "l1", "eta": "bic"}  # the paper's penalised fit, as the shipped examples
    result = run_experiment(config, embedder=embedder, save=False)
    rows = []
    for r in result.rows():
        sel = r["selector"]
        paired = sel != "recency"
        rows.append({
            "selector": sel, "memory precision": "— (empty memory)" if r["memory_empty"] == 1 else
            f"{r['memory_precision']:.3f}", "mean S": f"{r['mean_S']:.3f}",
            "late S": f"{r['late_S']:.3f}",
            "precision − recency": _ci(paired_difference(result, sel, "recency", 3, name="memory_precision"))
            if paired else "(baseline)",
            "late S − recency": _ci(paired_difference(result, sel, "recency", 3, late=True)) if paired else "—"})
    table = Table(rows, title=f"{runs} runs × {steps} steps per selector, k = 3; [95% interval over runs]")
    recovery = alpha_recovery(result.setup.model, result.setup.truth, result.setup.nodes)
    return WorldPanel(float(strength), result, table, recovery)


def draw_world_panel(panel: WorldPanel):
    """Left: memory precision per selector; right: late-stage S per selector; mean over runs with its 95%
    t-interval. Returns the Figure."""
    import matplotlib.pyplot as plt

    from ..cascade.diagnostics import interval

    result = panel.result
    labels = [s for s, _ in result.conditions]
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.2), constrained_layout=True)
    for ax, field, title in ((axes[0], "memory_precision", "memory precision (share of memory truly ancestral)"),
                             (axes[1], "late_S", "late-stage alignment S")):
        ivs = [interval([r[field] for r in result.run_rows() if r["selector"] == s]) for s in labels]
        means = [iv.mean for iv in ivs]
        err = [[iv.mean - iv.ci_low if math.isfinite(iv.ci_low) and math.isfinite(iv.mean) else 0 for iv in ivs],
               [iv.ci_high - iv.mean if math.isfinite(iv.ci_high) and math.isfinite(iv.mean) else 0 for iv in ivs]]
        empty = [not math.isfinite(m) for m in means]  # an empty memory has no precision: say so, keep its slot
        ax.bar(labels, [0.0 if e else m for e, m in zip(empty, means, strict=True)], yerr=err, capsize=4,
               color=["#4C72B0", "#55A868", "#C44E52", "#8172B2"][:len(labels)])
        for x, e in enumerate(empty):
            if e:
                ax.text(x, 0, "empty\nmemory", ha="center", va="bottom", fontsize=8, color="#555")
        ax.set_title(title, fontsize=10)
        ax.tick_params(axis="x", labelsize=9)
        if field == "memory_precision":
            ax.set_ylim(0, max([0.05, *(h for iv in ivs if math.isfinite(h := iv.ci_high))]) * 1.1)  # a share: ≥ 0
    fig.suptitle(f"world: excitation × {panel.strength:g} (true ρ = {panel.recovery['rho']:.2f})", fontsize=11)
    return fig


class WorldExplorer(widgets.VBox):
    """A slider for the excitation strength and a Run button over :func:`world_panel`; ``.run()`` does what the
    button does and returns the :class:`WorldPanel` (None on an error, shown in ``.status``). Panels are kept in
    ``.panels``."""

    def __init__(self, *, strength: float = 1.0, runs: int = 6, steps: int = 20, embedder: Any = None,
                 dpi: int = 90):
        super().__init__()
        STRENGTH.check("strength", strength, float)
        self.runs, self.steps, self.embedder, self.dpi = int(runs), int(steps), embedder, int(dpi)
        self.strength = widgets.FloatSlider(value=float(strength), min=STRENGTH.min, max=STRENGTH.max,
                                            step=STRENGTH.step, description="excitation ×", readout_format=".2f",
                                            continuous_update=False, style={"description_width": "initial"})
        self.run_button = widgets.Button(description="Run", button_style="primary", icon="play")
        self.run_button.on_click(lambda _b: self.run())
        self.status = widgets.HTML()
        self.table_html = widgets.HTML()
        self.image = widgets.Image(format="png", layout={"max_width": "100%"})
        self.panels: list[WorldPanel] = []
        note = widgets.HTML("<small style='color:#666'>0 = no excitation (every event an immigrant: no memory can "
                            "help); 1 = the shipped world (ρ = 0.7). The event counts stay the same.</small>")
        self.children = (widgets.HBox([self.strength, self.run_button]), note, self.status, self.table_html,
                         self.image)

    def run(self) -> WorldPanel | None:
        """Run the lab on the world the slider sets and show the table and figure."""

        self.status.value = "<i>simulating, fitting, generating…</i>"
        try:
            panel = world_panel(float(self.strength.value), runs=self.runs, steps=self.steps,
                                embedder=self.embedder)
        except Exception as exc:  # a bad setting must be shown, not lost in the kernel's log
            self.status.value = (f"<span style='color:#a33'><b>{html.escape(type(exc).__name__)}</b>: "
                                 f"{html.escape(str(exc))}</span>")
            return None
        self.panels.append(panel)
        self.image.value = png_bytes(draw_world_panel(panel), self.dpi)
        self.table_html.value = panel._repr_html_()
        self.status.value = f"<small>panel #{len(self.panels)}</small>"
        return panel


def world_explorer(**kwargs: Any) -> WorldExplorer:
    """The known-truth panel of notebook 02 (see :class:`WorldExplorer`); run once on creation."""
    explorer = WorldExplorer(**kwargs)
    explorer.run()
    return explorer
