"""Looking at policies and traces, before and after a model runs (notebook 04's first half):

- :func:`policy_table` — policies side by side, field by field (a policy is data);
- :func:`dry_run` / :func:`decisions_table` — a policy's decisions on hand-made :class:`~.policy.Signals`,
  round after round, before any model runs;
- :func:`trace_table` — one coordinator :class:`~.trace.Trace` as a compact table (round, worker, answer, SE,
  SD, concern, action, reason);
- :func:`score_answers` — the coordinator's own metrics on answers you write (a constructed case).

In the tables **SE** is the normalised semantic entropy H / ln n ∈ [0, 1] (higher = the samples disagree
more) and **SD** the semantic density ∈ [0, 1] (higher = the samples sit closer together).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

from ..semantic import SampleSet
from ..table import Table
from .coordinator import Coordinator
from .policy import Decision, Policy, Signals, get_policy
from .trace import Trace
from .workers import Extraction, WorkerAnswer

__all__ = ["ANSWER_CHARS", "clip_text", "decisions_table", "dry_run", "policy_table", "score_answers",
           "short_concerns", "short_reason", "signal_value", "trace_table"]

ANSWER_CHARS = 60


def clip_text(text: str, width: int = ANSWER_CHARS) -> str:
    """``text`` on one line, cut to ``width`` characters (with an ellipsis)."""
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[:width - 1] + "…"


def signal_value(x: float) -> float:
    """A signal for a table: rounded to 3 decimals; NaN (missing) stays NaN."""
    return round(float(x), 3) if not math.isnan(x) else math.nan


# ---------------------------------------------------------------------------------------------- policies




def policy_table(*policies: Any) -> Table:
    """Each policy (a preset name, dict or :class:`Policy`) as a column, one row per field: the whole
    policy is these values; :meth:`Policy.decide` reads nothing else."""
    pols = [get_policy(p) for p in (policies or ("none", "entropy_only", "density_only", "both"))]
    names = [p.name for p in pols]
    if len(set(names)) != len(names):
        raise ValueError(f"give policies with distinct names (they become the columns), got {names}")
    rows = []
    for f in dataclasses.fields(Policy):
        if f.name == "name":
            continue
        row: dict[str, Any] = {"field": f.name}
        for p in pols:
            v = getattr(p, f.name)
            row[p.name] = (", ".join(v) or "(none)") if isinstance(v, tuple) else v
        rows.append(row)
    return Table(rows, ["field", *names], title="policies as data (one column per policy)")


def short_concerns(decision: Decision) -> str:
    """The decision's concerns without their explanations: 'entropy 1 > 0.5; density 0.35 < 0.8', or '—'."""
    if not decision.concerns:
        return "—"
    return "; ".join(c.split(" (", 1)[0] for c in decision.concerns)


def short_reason(decision: Decision) -> str:
    """The decision's reason with the concern list taken out (it has its own column)."""
    reason = decision.reason
    if decision.concerns:
        reason = reason.replace(f" ({'; '.join(decision.concerns)})", "")
    return reason


def dry_run(policy: Any, signals: Sequence[Signals], *, n_workers: int | None = 3) -> list[Decision]:
    """Feed ``signals`` to ``policy.decide`` as rounds 1, 2, … (each decision joins the history) and stop at
    the first ``accept`` or ``final_select`` — the coordinator's loop without a model. Raises when the
    signals run out before the policy stops (give one per round, up to ``max_rounds``)."""
    policy = get_policy(policy)
    if not signals:
        raise ValueError("signals is empty: give one Signals per round")
    history: list[Decision] = []
    for r, s in enumerate(signals, start=1):
        d = policy.decide(s, r, history, n_workers=n_workers)
        history.append(d)
        if d.action in ("accept", "final_select"):
            return history
    raise ValueError(f"the policy had not stopped after {len(signals)} round(s) (last action {history[-1].action!r}); "
                     f"give signals for more rounds (max_rounds = {policy.max_rounds})")


def decisions_table(decisions: Sequence[Decision], labels: Sequence[str] | None = None, title: str = "") -> Table:
    """Decisions (e.g. from :func:`dry_run`) as rows: round, SE (H/ln n), SD, concern, action, reason;
    ``labels`` adds a first column naming each row."""
    if labels is not None and len(labels) != len(decisions):
        raise ValueError(f"labels has {len(labels)} entries for {len(decisions)} decisions")
    rows = []
    for i, d in enumerate(decisions):
        s = d.signals if d.signals is not None else Signals()
        row = {"case": labels[i]} if labels is not None else {}
        row.update({"round": d.round, "SE": signal_value(s.entropy), "SD": signal_value(s.density), "concern": short_concerns(d),
                    "action": d.action, "reason": short_reason(d)})
        rows.append(row)
    cols = (["case"] if labels is not None else []) + ["round", "SE", "SD", "concern", "action", "reason"]
    return Table(rows, cols, title=title)


# ---------------------------------------------------------------------------------------------- traces


def trace_table(trace: Trace, *, width: int = ANSWER_CHARS) -> Table:
    """One row per worker answer of a :class:`Trace`: round, how it was obtained (ask, reprompt, reassign,
    delegate), worker, answer (clipped to ``width``), SE (H/ln n), SD, then — on the answer the round
    chose — the concern, the policy's action and its reason (other delegation answers say 'not chosen').
    The title holds the question and the final answer."""
    rows = []
    for r in trace.rounds:
        for i, c in enumerate(r.candidates):
            s = c.signals
            chosen = i == r.chosen
            rows.append({
                "round": r.round, "how": r.action, "worker": c.answer.worker,
                "answer": clip_text(c.answer.answer or f"({c.answer.problem})", width),
                "SE": signal_value(s.entropy), "SD": signal_value(s.density),
                "concern": short_concerns(r.decision) if chosen else "",
                "action": r.decision.action if chosen else "(not chosen)",
                "reason": short_reason(r.decision) if chosen else "",
            })
    f = trace.final
    title = (f"Q: {trace.question}  [policy {trace.policy}] → final ({f.exit}, round {f.round}, {f.worker}"
             f"{'' if f.valid else ', INVALID'}): {clip_text(f.answer, width)!r}")
    return Table(rows, ["round", "how", "worker", "answer", "SE", "SD", "concern", "action", "reason"], title=title)


# ---------------------------------------------------------------------------------------------- constructed cases


def score_answers(coordinator: Coordinator, question: str, answers: Sequence[str]) -> Signals:
    """The :class:`Signals` the coordinator's own metrics (and judge) give ``answers`` written by hand, as if a
    worker had sampled them for ``question`` (the first is the primary). For constructed cases, e.g. every
    sample agreeing on a wrong answer."""
    if isinstance(answers, str) or not answers:
        raise ValueError("answers must be a non-empty list of strings (the sampled answers)")
    texts = [str(a) for a in answers]
    samples = SampleSet(texts=texts, question=question, meta={"constructed": True})
    wa = WorkerAnswer("hand-made", question, texts[0], texts[0], samples,
                      [Extraction(t, "first_sentence", t) for t in texts])
    return coordinator.score(wa).signals

