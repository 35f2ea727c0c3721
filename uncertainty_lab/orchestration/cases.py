"""Reading a benchmark run question by question (notebook 04's second half): which questions the gate flagged,
caught or let through, and where the policy's remedy helped or hurt.

- :data:`CASE_KINDS` / :func:`find_cases` — the run's questions sorted by what the gate did in round 1;
- :func:`case_table` — records as rows (first and final answer, signals, grades, actions);
- :func:`category_table` — round-1 flags and final accuracy per question category.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..table import Table
from .explore import clip_text, signal_value
from .record import OrchestrationRun, QuestionRecord, gate_of

__all__ = ["CASE_KINDS", "case_table", "category_table", "find_cases"]


#: The kinds of question :func:`find_cases` looks for.
CASE_KINDS = {
    "unanimous_wrong": "every first-round sample in one meaning class (SE = 0), no concern, and wrong",
    "accepted_wrong": "the gate raised no concern in round 1, yet the answer is wrong",
    "flagged_wrong": "the gate raised a concern in round 1 and the answer was indeed wrong",
    "flagged_right": "the gate raised a concern in round 1 though the answer was right (a false alarm)",
    "remedy_helped": "wrong in round 1, right after the policy's re-prompt / reassignment / selection",
    "remedy_hurt": "right in round 1, wrong after the policy acted (chasing the metric)",
}


def find_cases(run: OrchestrationRun, policy: Any = None) -> dict[str, list[QuestionRecord]]:
    """The run's questions sorted into :data:`CASE_KINDS` (a question can be in several). ``policy`` judges
    the first-round signals (default: the run's own policy, or ``both`` for a run without a gate); the
    remedy kinds compare the run's first-round and final grades."""
    gate = gate_of(run, policy)
    out: dict[str, list[QuestionRecord]] = {k: [] for k in CASE_KINDS}
    first, final = run.first_correct, run.correct
    for rec, ok1, ok in zip(run.records, first, final, strict=True):
        s = rec.trace.first_signals
        concerned = bool(gate.concerns(s))
        if not concerned and not ok1:
            out["accepted_wrong"].append(rec)
            if s.entropy == 0.0:
                out["unanimous_wrong"].append(rec)
        if concerned:
            out["flagged_wrong" if not ok1 else "flagged_right"].append(rec)
        if ok1 and not ok:
            out["remedy_hurt"].append(rec)
        if ok and not ok1:
            out["remedy_helped"].append(rec)
    return out


def case_table(records: Sequence[QuestionRecord], *, width: int = 48) -> Table:
    """Records as rows: id, category, first-round answer, SE, SD, right?, final answer, right?, actions."""
    rows = []
    for rec in records:
        t, s = rec.trace, rec.trace.first_signals
        rows.append({"id": rec.id, "category": rec.item.get("category", ""),
                     "first answer": clip_text(t.rounds[0].candidate.answer.answer, width), "SE": signal_value(s.entropy),
                     "SD": signal_value(s.density), "first right": bool(rec.first_grade and rec.first_grade.get("correct")),
                     "final answer": clip_text(t.answer, width), "final right": bool(rec.correct),
                     "actions": " → ".join(t.actions)})
    return Table(rows, ["id", "category", "first answer", "SE", "SD", "first right", "final answer", "final right",
                        "actions"])


def category_table(runs: Mapping[str, OrchestrationRun], gated: str = "both", baseline: str = "none") -> Table:
    """Per question category: questions, first-round answers wrong, how many the ``gated`` policy flagged
    (of the wrong ones, of the right ones), and the accuracy of ``baseline`` and ``gated`` (right / n).
    ``runs`` maps policy name → run (e.g. ``{p: result.runs[(model, p)] for p in result.policies}``)."""
    for name in (gated, baseline):
        if name not in runs:
            raise KeyError(f"no run for policy {name!r}; runs hold {list(runs)}")
    g, b = runs[gated], runs[baseline]
    if g.ids != b.ids:
        raise ValueError(f"the {gated!r} and {baseline!r} runs cover different questions")
    gate = gate_of(g, None)
    first, acc_g, acc_b = g.first_correct, g.correct, b.correct
    cats = list(dict.fromkeys(r.item.get("category", "?") for r in g.records))
    rows = []
    for cat in [*cats, "all"]:
        idx = [i for i, r in enumerate(g.records) if cat == "all" or r.item.get("category", "?") == cat]
        flagged = np.array([bool(gate.concerns(g.records[i].trace.first_signals)) for i in idx], dtype=bool)
        wrong = ~first[idx]
        rows.append({"category": cat, "n": len(idx), "wrong in round 1": int(wrong.sum()),
                     "flagged, wrong": f"{int((flagged & wrong).sum())}/{int(wrong.sum())}",
                     "flagged, right": f"{int((flagged & ~wrong).sum())}/{int((~wrong).sum())}",
                     f"{baseline} right": f"{int(acc_b[idx].sum())}/{len(idx)}",
                     f"{gated} right": f"{int(acc_g[idx].sum())}/{len(idx)}"})
    return Table(rows, title=f"round-1 flags of policy {gated!r} by category, and final accuracy")
