"""Notebook 05's "known truth" panel: change a search world (its stall probability, its format reliability) and
see the exhaustion gate's response — accuracy and tokens with and without the gate on the same questions.

The decisions live in plain functions a test can call without a browser:

- :func:`gate_response` — run the world's questions twice through the PBAI loop (``llm`` policy, the world as the
  model): a fixed budget alone, and the exhaustion gate before it; the paired comparison of the search lab
  (:func:`uncertainty_lab.search.comparisons.token_savings`: the token saving with its bootstrap interval next to
  the accuracy difference with McNemar's test), the stop reasons, and what :func:`~uncertainty_lab.worlds.search.
  chain_theory` predicts when the world is clean enough for it (query skill, format and extraction all 1);
- :func:`response_html` — that response as a small HTML table; :func:`draw_response` — as a figure.

:class:`GateWorldExplorer` (from :func:`gate_world_explorer`) only wires these to a menu and two sliders. The world's
answers are not cached (they cost microseconds to redraw), and no run file is written.
"""

from __future__ import annotations

import html
import math
from typing import Any

import ipywidgets as widgets
import numpy as np

from ..search import SearchEnvironment, run_episode
from ..search.comparisons import token_savings
from ..search.config import SearchConfig, question_documents
from ..worlds import load_world
from ..worlds.search import SearchWorld, chain_theory, world_llm
from .controls import SliderRange, png_bytes

__all__ = ["RANGES", "WORLDS", "GateWorldExplorer", "draw_response", "gate_response", "gate_world_explorer",
           "response_html", "world_with"]

WORLDS = ("search_premature", "search_efficient")
#: the sliders: the world's stall probability and format reliability
RANGES: dict[str, SliderRange] = {"stall": SliderRange(0.0, 0.9, 0.05, 0.5),
                                  "format_reliability": SliderRange(0.5, 1.0, 0.05, 1.0)}
#: the budget each shipped world's example runs with
MAX_STEPS = {"search_premature": 12, "search_efficient": 8}


class _NoCache:
    """A completion cache that keeps nothing: a world's answers are cheaper to draw again than to store."""

    def get(self, key: str) -> None:
        return None

    def put(self, key: str, request: Any, record: Any) -> None:
        return None

    def discard(self, key: str, why: str) -> None:
        return None


def world_with(name: str = "search_premature", **agent: float) -> SearchWorld:
    """The shipped world ``name`` with some of its ``[agent]`` rates replaced (checked like a world file's)."""
    base = load_world(name)
    for key, value in agent.items():
        if key in RANGES:
            RANGES[key].check(key, value)
    spec = {**base.spec, "agent": {**base.spec.get("agent", {}), **agent}}
    return SearchWorld(name=base.name, description=base.description, source=f"{base.source}, changed", spec=spec)


def gate_response(world: SearchWorld | str = "search_premature", *, n_questions: int | None = None,
                  max_steps: int | None = None, belief: str = "predicate", seed: int = 0,
                  level: float = 0.95, n_boot: int = 500) -> dict[str, Any]:
    """Both arms over the world's first ``n_questions`` questions (each searching its own paragraphs): per arm
    the accuracy, mean context and model tokens and the stop reasons; the lab's savings row; and the theory."""
    world = load_world(world) if isinstance(world, str) else world
    max_steps = max_steps or MAX_STEPS.get(world.name, 8)
    questions = world.questions[:n_questions]
    cfg = SearchConfig(llm=f"world:{world.name}", policies=["llm"], beliefs=[belief], max_steps=max_steps, seed=seed,
                       gate_sets=[["fixed_budget"], ["exhaustion", "fixed_budget"]], level=level, n_boot=n_boot)
    llm = world_llm(world, cache=_NoCache())
    conditions = cfg.conditions()
    scores = {}
    for c in conditions:
        scores[c] = [run_episode(q, SearchEnvironment(question_documents(q, world.documents)), llm=llm,
                                 policy="llm", belief=belief, gates=c.episode_gates(), max_steps=max_steps,
                                 seed=seed).score() for q in questions]
    (row,) = token_savings(conditions, scores.__getitem__, cfg)
    arms = {}
    for c in conditions:
        sc = scores[c]
        arms[c.gate_label] = {"accuracy": float(np.mean([s.exact_match == 1.0 for s in sc])),
                              "context_tokens": float(np.mean([s.cost for s in sc])),
                              "model_tokens": float(np.mean([s.llm_tokens for s in sc])),
                              "steps": float(np.mean([s.steps for s in sc])),
                              "stops": {r: sum(s.stop_reason == r for s in sc) for r in ("exhausted", "budget")}}
    r = world.rates
    clean = r["query_skill"] == r["format_reliability"] == r["extraction_accuracy"] == 1.0
    theory = None
    if clean:
        ks = [world.chains[q.question].k for q in questions]
        theory = {gated: float(np.mean([chain_theory(k, r["stall"], max_steps=max_steps, gate=gated,
                                                     answer_when_done=r["answer_when_done"])["accuracy"] for k in ks]))
                  for gated in (False, True)}
    return {"world": world.name, "rates": dict(r), "n": len(questions), "max_steps": max_steps, "belief": belief,
            "arms": arms, "savings": row, "theory": theory}


def response_html(resp: dict[str, Any]) -> str:
    """The two arms as a table, then the saving and the accuracy verdict in one line each."""
    s, lvl = resp["savings"], "95%"
    head = "<tr><th>arm</th><th>accuracy</th><th>context tokens</th><th>model tokens</th><th>steps</th>" \
           "<th>stops exhausted / budget</th>" + ("<th>theory</th>" if resp["theory"] else "") + "</tr>"
    body = []
    for label, a in resp["arms"].items():
        th = f"<td>{resp['theory']['exhaustion' in label]:.0%}</td>" if resp["theory"] else ""
        body.append(f"<tr><td>{html.escape(label)}</td><td>{a['accuracy']:.0%}</td><td>{a['context_tokens']:,.0f}</td>"
                    f"<td>{a['model_tokens']:,.0f}</td><td>{a['steps']:.1f}</td>"
                    f"<td>{a['stops']['exhausted']} / {a['stops']['budget']}</td>{th}</tr>")
    t = s["context_tokens"]
    saving = "—" if math.isnan(t["saving"]) else f"{t['saving']:+.0%} [{t['low']:+.0%}, {t['high']:+.0%}]"
    rates = ", ".join(f"{k} = {v:g}" for k, v in resp["rates"].items())
    return (f"<b>world:{html.escape(resp['world'])}</b> <span style='color:gray'>({html.escape(rates)}; "
            f"{resp['n']} questions, {resp['belief']} belief, budget {resp['max_steps']})</span>"
            f"<table>{head}{''.join(body)}</table>"
            f"context-token saving of the gate: <b>{saving}</b> ({lvl} bootstrap) · "
            f"{html.escape(s['accuracy_note'])}")


def draw_response(resp: dict[str, Any], axes=None):
    """Accuracy (with the theory as a cross when known) and context tokens per arm, side by side."""
    import matplotlib.pyplot as plt

    if axes is None:
        fig, axes = plt.subplots(1, 2, figsize=(7.5, 2.6))
    labels = ["budget only", "gate + budget"]
    arms = list(resp["arms"].values())
    colors = ["#8c8c8c", "#2b7bba"]
    axes[0].bar(labels, [a["accuracy"] for a in arms], color=colors)
    if resp["theory"]:
        axes[0].scatter(labels, [resp["theory"][False], resp["theory"][True]], marker="x", color="k", zorder=3,
                        label="theory")
        axes[0].legend(loc="lower left", fontsize=8)
    axes[0].set_ylim(0, 1.05)
    axes[0].set_ylabel("accuracy")
    axes[1].bar(labels, [a["context_tokens"] for a in arms], color=colors)
    axes[1].set_ylabel("context tokens / episode")
    axes[0].figure.suptitle(f"world:{resp['world']} — stall {resp['rates']['stall']:g}, format "
                            f"{resp['rates']['format_reliability']:g}", fontsize=10)
    axes[0].figure.tight_layout()
    return axes[0].figure


class GateWorldExplorer(widgets.VBox):
    """A world menu and stall / format sliders over :func:`gate_response`. ``.world`` (Dropdown), ``.sliders``,
    ``.status`` (HTML), ``.image`` (PNG); ``.redraw()`` reruns both arms and returns the response."""

    def __init__(self, world: str = "search_premature", *, n_questions: int | None = 20, dpi: int = 80,
                 **values: float):
        super().__init__()
        unknown = set(values) - set(RANGES)
        if unknown:
            raise ValueError(f"unknown slider(s) {sorted(unknown)}; the sliders are {list(RANGES)}")
        if world not in WORLDS:
            raise ValueError(f"world must be one of {WORLDS}, got {world!r}")
        self.n_questions, self.dpi = n_questions, int(dpi)
        rates = load_world(world).rates
        self.world = widgets.Dropdown(options=list(WORLDS), value=world, description="world")
        self.sliders: dict[str, widgets.FloatSlider] = {}
        for name, r in RANGES.items():
            value = float(values.get(name, rates[name]))
            r.check(name, value)
            self.sliders[name] = widgets.FloatSlider(value=value, min=r.min, max=r.max, step=r.step,
                                                     continuous_update=False, description=name,
                                                     style={"description_width": "initial"})
        self.status = widgets.HTML()
        self.image = widgets.Image(format="png", layout={"max_width": "100%"})
        self.response: dict[str, Any] = {}
        self.world.observe(self._on_world, names="value")
        for s in self.sliders.values():
            s.observe(self._on_change, names="value")
        self.children = (widgets.HBox([self.world, *self.sliders.values()]), self.status, self.image)
        self.redraw()

    def _on_world(self, change) -> None:
        rates = load_world(self.world.value).rates
        with self.hold_trait_notifications():
            for name, s in self.sliders.items():
                s.unobserve(self._on_change, names="value")
                s.value = rates[name]
                s.observe(self._on_change, names="value")
        self.redraw()

    def _on_change(self, change) -> None:
        self.redraw()

    def redraw(self) -> dict[str, Any]:

        world = world_with(self.world.value, **{k: float(s.value) for k, s in self.sliders.items()})
        self.response = gate_response(world, n_questions=self.n_questions)
        self.status.value = response_html(self.response)
        self.image.value = png_bytes(draw_response(self.response), self.dpi)
        return self.response


def gate_world_explorer(world: str = "search_premature", *, n_questions: int | None = 20, dpi: int = 80,
                        **values: float) -> GateWorldExplorer:
    """The known-truth panel over ``world`` (``values``: ``stall``, ``format_reliability``)."""
    return GateWorldExplorer(world, n_questions=n_questions, dpi=dpi, **values)
