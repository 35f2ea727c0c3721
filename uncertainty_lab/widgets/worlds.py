"""The "Known truth" panels of notebooks 03 and 04: a QA world (:mod:`uncertainty_lab.worlds.qa`) whose settings sit on
sliders, and what the methods do on it — semantic entropy's and density's AUROC, each policy's accuracy — beside what
the world's exact theory predicts (:mod:`uncertainty_lab.orchestration.known_truth`).

:func:`known_truth` computes one comparison (a :class:`KnownTruth`, a table); :func:`known_truth_explorer` puts the
world's settings on sliders and recomputes it on every change."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..table import Table

__all__ = ["KnownTruth", "known_truth", "known_truth_explorer"]

POLICIES = ("none", "entropy_only", "density_only", "both")
SLIDERS = {"trap_share": (0.0, 1.0, 0.1, "confidently wrong share"), "correct_answers": (1, 3, 1, "right answers / q"),
           "hard_paraphrase": (0.0, 0.3, 0.05, "unmergeable paraphrase"), "ease_high": (0.0, 5.0, 0.5, "easiest q")}


@dataclass
class KnownTruth:
    """A world's ``theory`` (expected accuracy per policy, expected AUROC per signal) and one ``simulated`` run of the
    coordinator on its questions (same quantities), with the ``world`` and the ``seed``."""

    world: Any
    theory: dict[str, Any]
    simulated: dict[str, Any]
    seed: int = 0
    rows: list[dict[str, Any]] = field(default_factory=list)

    def table(self) -> Table:
        evidence = self.simulated.get("evidence", {})
        rows = [{"quantity": f"AUROC of {s} (wrong-answer detection)", "theory": round(self.theory["auroc"][s], 3),
                 "simulated": (f"{evidence[s].cell()} (n {evidence[s].n}: {evidence[s].n_pos} wrong, "
                               f"{evidence[s].n_neg} right)") if s in evidence else round(self.simulated["auroc"][s], 3)}
                for s in ("entropy", "density")]
        rows += [{"quantity": f"accuracy of policy {p}", "theory": round(a, 3),
                  "simulated": round(self.simulated["accuracy"][p], 3)} for p, a in self.theory["accuracy"].items()]
        return Table(rows, title=f"world:{self.world.name} — {len(self.world.questions)} questions, theory (exact) vs "
                                 f"one simulated run (seed {self.seed})")

    def _repr_html_(self) -> str:
        return self.table()._repr_html_()

    def __str__(self) -> str:
        return str(self.table())


def known_truth(world: Any = "calibrated", changes: Mapping[str, Any] | None = None, *,
                policies: Sequence[str] = POLICIES, n_samples: int = 5, judge: Any = "embedding", seed: int = 0,
                embedder: Any = None) -> KnownTruth:
    """Theory and one simulated run of ``policies`` on a QA ``world`` (a name, file or :class:`World`; ``changes``
    replace settings of its file), with the lab's default workers, metrics and ``judge`` (``embedder``: semantic
    density's, default the judge's or all-MiniLM-L6-v2)."""
    from .. import registry
    from ..orchestration.coordinator import Coordinator
    from ..orchestration.grading import QAGrader
    from ..orchestration.known_truth import theory
    from ..orchestration.policy import get_policy
    from ..orchestration.workers import WORKER_ROLES, default_workers
    from ..semantic.discrimination import discrimination
    from ..worlds import WorldLLM, load_world

    w = load_world(world) if isinstance(world, (str, dict)) else world
    if changes:
        w = w.with_changes(**changes)
    judge = registry.resolve("equivalence_judges", judge, what="judge")
    metrics = {"entropy": registry.resolve("metrics", "discrete_semantic_entropy", defaults={"judge": judge}),
               "density": registry.resolve("metrics", "semantic_density",
                                           defaults={"judge": judge, **({"embedder": embedder} if embedder else {})})}
    pols = [get_policy(p) for p in policies]
    th = theory(w, w.questions, pols, list(WORKER_ROLES), n_samples, judge, metrics["density"])
    llm = WorldLLM.from_world(w)
    grader, items = QAGrader(), {it.question: it for it in w.items()}
    acc, first = {}, None
    for p in pols:
        coord = Coordinator(default_workers(llm), p, metrics, n_samples, judge, seed=seed)
        traces = [coord.run(q.text) for q in w.questions]
        acc[p.name] = float(np.mean([grader(items[t.question], t.final.answer)["correct"] for t in traces]))
        if first is None:
            first = traces
    right = np.array([grader(items[t.question], t.rounds[0].candidates[0].answer.answer)["correct"] for t in first])
    found = {"entropy": discrimination(np.array([1 - t.first_signals.entropy for t in first]), right, seed=seed),
             "density": discrimination(np.array([t.first_signals.density for t in first]), right, seed=seed)}
    return KnownTruth(w, th, {"accuracy": acc, "auroc": {k: float(d) for k, d in found.items()}, "evidence": found},
                      seed)


def known_truth_explorer(world: str = "calibrated", *, policies: Sequence[str] = POLICIES, judge: Any = "embedding",
                         n_questions: int | None = None, seed: int = 0, embedder: Any = None):
    """Sliders over a QA world's settings (:data:`SLIDERS`); each change recomputes :func:`known_truth` below them."""
    import ipywidgets as W
    from IPython.display import display

    from ..worlds import load_world

    base = load_world(world)
    if n_questions is not None:
        base = base.with_changes(n_questions=n_questions)
    controls = {}
    for key, (lo, hi, step, label) in SLIDERS.items():
        value = base.params[key]
        make = W.IntSlider if isinstance(step, int) else W.FloatSlider
        controls[key] = make(value=value, min=lo, max=hi, step=step, description=label,
                             style={"description_width": "initial"}, continuous_update=False)
    out = W.Output()

    def update(_=None):
        changes = {k: c.value for k, c in controls.items() if c.value != base.params[k]}
        if changes.get("correct_answers", 1) >= base.params["options"]:
            changes["correct_answers"] = base.params["options"] - 1
        with out:
            out.clear_output(wait=True)
            display(known_truth(base, changes or None, policies=policies, judge=judge, seed=seed, embedder=embedder))

    for c in controls.values():
        c.observe(update, names="value")
    update()
    return W.VBox([W.HBox(list(controls.values())[:2]), W.HBox(list(controls.values())[2:]), out])
