"""Notebook 04's gate explorer: move the thresholds over a recorded run's round-1 signals and see what the gate
would flag — no model is called.

The decisions live in plain functions a test can call without a browser:

- :func:`gate_policy` — the :class:`~uncertainty_lab.orchestration.Policy` for a gate choice and two thresholds;
- :func:`gate_summary` — how many questions that gate flags in round 1, and how many of the flagged / passed
  first answers were wrong (the gate's catch rate and its false alarms);
- :func:`summary_html` — the summary as one line of HTML.

:class:`GateExplorer` (from :func:`gate_explorer`) only wires these and
:func:`~uncertainty_lab.orchestration.figures.draw_signal_map` to two sliders and a menu. Like notebook
01's explorer it shows the drawing as a PNG in an ``ipywidgets.Image`` (not an ``Output`` widget, which stalled
headless execution).

Only round 1 is re-judged: what the policy would *do* next (re-prompt, reassign, …) needs the model again —
run the coordinator for that.
"""

from __future__ import annotations

import html
import math
from typing import Any

import ipywidgets as widgets

from ..orchestration.figures import draw_signal_map
from ..orchestration.grading import grade_label
from ..orchestration.policy import Policy
from ..orchestration.record import OrchestrationRun
from .controls import png_bytes
from .hawkes import SliderRange

__all__ = ["GATE_CHOICES", "RANGES", "GateExplorer", "gate_explorer", "gate_policy", "gate_summary", "summary_html"]

#: menu label → the gates a policy reads
GATE_CHOICES: dict[str, tuple[str, ...]] = {
    "entropy and density": ("entropy", "density"),
    "entropy only": ("entropy",),
    "density only": ("density",),
}
#: slider ranges: τ_E on H / ln n, τ_D on the density's [0, 1]
RANGES: dict[str, SliderRange] = {
    "entropy_threshold": SliderRange(0.05, 0.95, 0.05, 0.5),
    "density_threshold": SliderRange(0.05, 1.0, 0.05, 0.8),
}


def gate_policy(gates: str | tuple[str, ...] = "entropy and density", entropy_threshold: float = 0.5,
                density_threshold: float = 0.8) -> Policy:
    """A policy reading ``gates`` (a :data:`GATE_CHOICES` label or a tuple of gate names) at the two thresholds."""
    if isinstance(gates, str):
        if gates not in GATE_CHOICES:
            raise ValueError(f"gates must be one of {list(GATE_CHOICES)}, got {gates!r}")
        gates = GATE_CHOICES[gates]
    return Policy(name="chosen gate", metrics=tuple(gates), entropy_threshold=entropy_threshold,
                  density_threshold=density_threshold)


def gate_summary(run: OrchestrationRun, policy: Policy) -> dict[str, Any]:
    """Round 1 of every question in ``run`` judged by ``policy``: ``n``, ``flagged``, ``wrong`` (first answers
    that were not right), of which ``refused`` (refusals of a question that asks for an answer; a refusal of an
    item that asks to be declined is right and not counted here),
    ``caught`` (not right and flagged), ``false_alarms`` (right and flagged), ``missed`` (not right and passed),
    the ``fire_rate`` (flagged / n), the ``catch_rate`` (caught / wrong) and ``false_alarm_rate`` (false alarms /
    right), NaN when undefined, and ``passed_accuracy`` (the share right among the answers the gate lets through)."""
    if not isinstance(run, OrchestrationRun) or not len(run):
        raise ValueError("run must be a non-empty OrchestrationRun (e.g. result.runs[(model, 'none')])")
    right = [bool(x) for x in run.first_correct]
    flagged = [bool(policy.concerns(r.trace.first_signals)) for r in run.records]
    n = len(flagged)
    caught = sum(f and not ok for f, ok in zip(flagged, right, strict=True))
    false_alarms = sum(f and ok for f, ok in zip(flagged, right, strict=True))
    wrong = right.count(False)
    passed = n - sum(flagged)
    passed_right = right.count(True) - false_alarms
    refused = sum(1 for r, ok in zip(run.records, right, strict=True)
                  if not ok and grade_label(r.first_grade) == "refused")
    return {"n": n, "flagged": sum(flagged), "wrong": wrong, "refused": refused,
            "fire_rate": sum(flagged) / n, "caught": caught, "false_alarms": false_alarms,
            "missed": wrong - caught, "catch_rate": caught / wrong if wrong else math.nan,
            "false_alarm_rate": false_alarms / (n - wrong) if n - wrong else math.nan,
            "passed_accuracy": passed_right / passed if passed else math.nan,
            "gates": list(policy.metrics), "entropy_threshold": policy.entropy_threshold,
            "density_threshold": policy.density_threshold}


def _pct(x: float) -> str:
    return "—" if math.isnan(x) else f"{x:.0%}"


def summary_html(summary: dict[str, Any]) -> str:
    """One line: how many questions are flagged, how many wrong answers are caught, how many right ones are
    false alarms, and the accuracy of what passes."""
    s = summary
    refused = f", {s['refused']} of them refusals" if s.get("refused") else ""
    return (f"<b>flags {s['flagged']} of {s['n']}</b> round-1 answers · catches <b>{s['caught']} of {s['wrong']}</b> "
            f"wrong ones{refused} ({_pct(s['catch_rate'])}) · false alarms on {s['false_alarms']} of {s['n'] - s['wrong']} "
            f"right ones ({_pct(s['false_alarm_rate'])}) · accuracy of what passes: {_pct(s['passed_accuracy'])}"
            f" <span style='color:gray'>({html.escape(', '.join(s['gates']))}; τ_E = {s['entropy_threshold']:g}, "
            f"τ_D = {s['density_threshold']:g})</span>")


class GateExplorer(widgets.VBox):
    """A gate menu and τ_E / τ_D sliders over :func:`draw_signal_map` of a recorded ``run``. ``.gates``
    (Dropdown), ``.sliders`` (dict), ``.status`` (HTML), ``.image`` (PNG); ``.redraw()`` re-judges round 1 and
    returns the :func:`gate_summary`."""

    def __init__(self, run: OrchestrationRun, *, gates: str = "entropy and density", dpi: int = 90, **values: float):
        super().__init__()
        unknown = set(values) - set(RANGES)
        if unknown:
            raise ValueError(f"unknown slider(s) {sorted(unknown)}; the sliders are {list(RANGES)}")
        gate_policy(gates)  # checks the menu choice
        self.run, self.dpi = run, int(dpi)
        self.gates = widgets.Dropdown(options=list(GATE_CHOICES), value=gates, description="gate",
                                      style={"description_width": "initial"})
        self.sliders: dict[str, widgets.FloatSlider] = {}
        for name, r in RANGES.items():
            value = float(values.get(name, r.value))
            if not r.min <= value <= r.max:
                raise ValueError(f"{name}={value} is outside the slider range [{r.min}, {r.max}]")
            self.sliders[name] = widgets.FloatSlider(
                value=value, min=r.min, max=r.max, step=r.step, continuous_update=False, readout_format=".2f",
                description="τ_E (H/ln n)" if name == "entropy_threshold" else "τ_D (density)",
                style={"description_width": "initial"}, layout={"width": "360px"})
        self.status = widgets.HTML()
        self.image = widgets.Image(format="png", layout={"max_width": "100%"})
        self.summary: dict[str, Any] = {}
        for control in (self.gates, *self.sliders.values()):
            control.observe(self._on_change, names="value")
        self.children = (widgets.HBox([self.gates, *self.sliders.values()]), self.status, self.image)
        self.redraw()

    def policy(self) -> Policy:
        """The policy the controls describe."""
        return gate_policy(self.gates.value, float(self.sliders["entropy_threshold"].value),
                           float(self.sliders["density_threshold"].value))

    def _on_change(self, change) -> None:
        self.redraw()

    def redraw(self) -> dict[str, Any]:
        policy = self.policy()
        self.summary = gate_summary(self.run, policy)
        self.image.value = png_bytes(draw_signal_map(self.run, policy), self.dpi)
        self.status.value = summary_html(self.summary)
        return self.summary


def gate_explorer(run: OrchestrationRun, *, gates: str = "entropy and density", dpi: int = 90,
                  **values: float) -> GateExplorer:
    """The gate explorer over ``run``'s round-1 signals (``values``: ``entropy_threshold``, ``density_threshold``)."""
    return GateExplorer(run, gates=gates, dpi=dpi, **values)
