"""The helpers behind notebook 04's cells (uncertainty-guided orchestration), kept here so tests reach them.

- :func:`policy_table` — policies side by side, field by field (a policy is data);
- :func:`dry_run` / :func:`decisions_table` — a policy's decisions on hand-made :class:`~.policy.Signals`,
  round after round, before any model runs;
- :func:`trace_table` — one coordinator :class:`~.coordinator.Trace` as a compact table (round, worker,
  answer, SE, SD, concern, action, reason);
- :func:`score_answers` — the coordinator's own metrics on answers you write (a constructed case);
- :func:`find_cases` / :func:`category_table` / :func:`draw_signal_map` — where the gate helps and where it
  cannot, read off a benchmark run;
- :func:`sample_size_table` — how large a gap a few dozen questions can resolve (Wilson, McNemar);
- :class:`ScriptedLLM` — a backend that replies from a script (no model, no cache), for a labelled,
  scripted illustration of the coordinator loop.

In the tables **SE** is the normalised semantic entropy H / ln n ∈ [0, 1] (higher = the samples disagree
more) and **SD** the semantic density ∈ [0, 1] (higher = the samples sit closer together).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ..llm import Completion, LLMBackend
from ..semantic import SampleSet
from ..table import Table
from .coordinator import ACCEPTANCE_CRITERIA, BenchmarkRun, Coordinator, QuestionRecord, Trace, policy_of
from .policy import Decision, Policy, Signals, get_policy
from .workers import WORKER_ROLES, Extraction, WorkerAnswer

__all__ = [
    "CASE_KINDS",
    "ScriptedLLM",
    "case_table",
    "category_table",
    "decisions_table",
    "draw_signal_map",
    "dry_run",
    "find_cases",
    "policy_table",
    "sample_size_table",
    "score_answers",
    "short_concerns",
    "short_reason",
    "smallest_significant_gap",
    "trace_table",
]

ANSWER_CHARS = 60


def _clip(text: str, width: int = ANSWER_CHARS) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[:width - 1] + "…"


def _num(x: float) -> float:
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
        row.update({"round": d.round, "SE": _num(s.entropy), "SD": _num(s.density), "concern": short_concerns(d),
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
                "answer": _clip(c.answer.answer or f"({c.answer.problem})", width),
                "SE": _num(s.entropy), "SD": _num(s.density),
                "concern": short_concerns(r.decision) if chosen else "",
                "action": r.decision.action if chosen else "(not chosen)",
                "reason": short_reason(r.decision) if chosen else "",
            })
    f = trace.final
    title = (f"Q: {trace.question}  [policy {trace.policy}] → final ({f.exit}, round {f.round}, {f.worker}"
             f"{'' if f.valid else ', INVALID'}): {_clip(f.answer, width)!r}")
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


# ---------------------------------------------------------------------------------------------- reading a run

#: The kinds of question :func:`find_cases` looks for.
CASE_KINDS = {
    "unanimous_wrong": "every first-round sample in one meaning class (SE = 0), no concern, and wrong",
    "accepted_wrong": "the gate raised no concern in round 1, yet the answer is wrong",
    "flagged_wrong": "the gate raised a concern in round 1 and the answer was indeed wrong",
    "flagged_right": "the gate raised a concern in round 1 though the answer was right (a false alarm)",
    "remedy_helped": "wrong in round 1, right after the policy's re-prompt / reassignment / selection",
    "remedy_hurt": "right in round 1, wrong after the policy acted (chasing the metric)",
}


def _gate(run: BenchmarkRun, policy: Any) -> Policy:
    if policy is not None:
        return get_policy(policy)
    p = policy_of(run)
    return p if p.metrics else get_policy("both")


def find_cases(run: BenchmarkRun, policy: Any = None) -> dict[str, list[QuestionRecord]]:
    """The run's questions sorted into :data:`CASE_KINDS` (a question can be in several). ``policy`` judges
    the first-round signals (default: the run's own policy, or ``both`` for a run without a gate); the
    remedy kinds compare the run's first-round and final grades."""
    gate = _gate(run, policy)
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
                     "first answer": _clip(t.rounds[0].candidate.answer.answer, width), "SE": _num(s.entropy),
                     "SD": _num(s.density), "first right": bool(rec.first_grade and rec.first_grade.get("correct")),
                     "final answer": _clip(t.answer, width), "final right": bool(rec.correct),
                     "actions": " → ".join(t.actions)})
    return Table(rows, ["id", "category", "first answer", "SE", "SD", "first right", "final answer", "final right",
                        "actions"])


def category_table(runs: Mapping[str, BenchmarkRun], gated: str = "both", baseline: str = "none") -> Table:
    """Per question category: questions, first-round answers wrong, how many the ``gated`` policy flagged
    (of the wrong ones, of the right ones), and the accuracy of ``baseline`` and ``gated`` (right / n).
    ``runs`` maps policy name → run (e.g. ``{p: result.runs[(model, p)] for p in result.policies}``)."""
    for name in (gated, baseline):
        if name not in runs:
            raise KeyError(f"no run for policy {name!r}; runs hold {list(runs)}")
    g, b = runs[gated], runs[baseline]
    if g.ids != b.ids:
        raise ValueError(f"the {gated!r} and {baseline!r} runs cover different questions")
    gate = _gate(g, None)
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


def draw_signal_map(run: BenchmarkRun, policy: Any = None, *, ax: Any = None, title: str | None = None):
    """Each question's first-round (SE, SD) as a point — filled = the first answer was right, ✕ = wrong —
    with the policy's thresholds: concern when SE > τ_E or SD < τ_D (the shaded region). A wrong answer in
    the clean corner (SE ≈ 0, SD ≈ 1) is an error every sample shared; no sampling gate can catch it.
    Returns the figure (a new one unless ``ax`` is given). Points are jittered slightly so ties stay visible."""
    from matplotlib.figure import Figure

    gate = _gate(run, policy)
    if ax is None:
        fig = Figure(figsize=(5.6, 4.4), layout="constrained")
        ax = fig.subplots()
    else:
        fig = ax.figure
    s = [r.trace.first_signals for r in run.records]
    se = np.array([x.entropy for x in s], dtype=float)
    sd = np.array([x.density for x in s], dtype=float)
    ok = run.first_correct
    jitter = np.random.default_rng(0).uniform(-0.012, 0.012, size=(2, len(s)))
    x, y = np.clip(se + jitter[0], -0.02, 1.02), np.clip(sd + jitter[1], -0.02, 1.02)
    tau_e = gate.entropy_threshold if "entropy" in gate.metrics else None
    tau_d = gate.density_threshold if "density" in gate.metrics else None
    if tau_e is not None:
        ax.axvspan(tau_e, 1.05, color="tab:red", alpha=0.08, lw=0)
        ax.axvline(tau_e, color="tab:red", ls="--", lw=1, label=f"τ_E = {tau_e:g} (H/ln n)")
    if tau_d is not None:
        ax.axhspan(-0.05, tau_d, color="tab:orange", alpha=0.08, lw=0)
        ax.axhline(tau_d, color="tab:orange", ls="--", lw=1, label=f"τ_D = {tau_d:g}")
    ax.scatter(x[ok], y[ok], marker="o", color="tab:green", label=f"right ({int(ok.sum())})", zorder=3)
    ax.scatter(x[~ok], y[~ok], marker="x", color="tab:red", label=f"wrong ({int((~ok).sum())})", zorder=3)
    ax.set_xlim(-0.05, 1.05)
    ax.set_ylim(-0.05, 1.05)
    ax.set_xlabel("semantic entropy H / ln n (round 1)")
    ax.set_ylabel("semantic density (round 1)")
    ax.set_title(title or f"round-1 signals, {len(s)} questions; shaded = concern ({gate.name})")
    ax.legend(fontsize="small", loc="lower left")
    return fig


# ---------------------------------------------------------------------------------------------- sample size


def smallest_significant_gap(n: int, discordant: int | None = None, level: float = 0.95) -> float:
    """The smallest accuracy gap (a fraction) between two policies on the same ``n`` questions that McNemar's
    exact test calls real at ``level``, when ``discordant`` questions are right under exactly one policy
    (default: all of them split as unevenly as possible — the best case). NaN when no split can be significant
    (too few discordant questions)."""
    from statsmodels.stats.contingency_tables import mcnemar

    if not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    alpha = 1.0 - level
    ds = range(1, n + 1) if discordant is None else [discordant]
    if discordant is not None and not 0 <= discordant <= n:
        raise ValueError(f"discordant must be in [0, n], got {discordant!r}")
    best = math.nan
    for d in ds:
        for a in range((d + 1) // 2, d + 1):  # a right only under one policy, d - a only under the other
            p = mcnemar([[0, a], [d - a, 0]], exact=True).pvalue
            if p < alpha:
                gap = (2 * a - d) / n
                best = gap if math.isnan(best) else min(best, gap)
                break
        if discordant is None and not math.isnan(best):
            # the first d with a significant split is d = a (all one way); a larger d needs a lopsided split
            # whose gap 2a - d is at least as large (about 2·sqrt(d)), so the search can stop here
            return best
    return best


def sample_size_table(ns: Sequence[int] = (6, 40, 50, 100, 400), *, accuracy: float = 0.5,
                      discordant_share: float = 0.3, level: float = 0.95) -> Table:
    """For each number of questions n: the standard error of one accuracy near ``accuracy`` and its 95%
    Wilson half-width (points), the smallest gap McNemar could ever call real (every discordant question
    favouring one policy), and the gap it needs when ``discordant_share`` of the questions are discordant
    (a realistic split) — all in percentage points."""
    from ..semantic.evaluation import accuracy_ci

    rows = []
    for n in ns:
        k = int(round(accuracy * n))
        ci = accuracy_ci(np.arange(n) < k, level=level)
        d = max(1, int(round(discordant_share * n)))
        best = smallest_significant_gap(n, level=level)
        typical = smallest_significant_gap(n, d, level=level)
        rows.append({"questions": n, "SE of one accuracy (pts)": round(100 * math.sqrt(accuracy * (1 - accuracy) / n), 1),
                     "Wilson ± (pts)": round(100 * (ci.high - ci.low) / 2, 1),
                     "smallest real gap, best case (pts)": "impossible" if math.isnan(best) else round(100 * best, 1),
                     f"gap needed, {discordant_share:.0%} discordant (pts)":
                         "impossible" if math.isnan(typical) else round(100 * typical, 1)})
    return Table(rows, title=f"what n questions can resolve (accuracy near {accuracy:.0%}, {level:.0%} level)")


# ---------------------------------------------------------------------------------------------- scripted backend


def _role_of(system: str) -> str:
    return next((name for name, text in WORKER_ROLES.items() if text == system), "?")


def _kind_of(user: str) -> str:
    if "New angle:" in user:
        return "reprompt"
    if ACCEPTANCE_CRITERIA in user:
        return "delegate"
    return "ask"


@dataclass
class ScriptedLLM(LLMBackend):
    """A backend that answers from ``script`` instead of a model — for illustrations and tests, never for
    results. Keys are ``"<worker>:<kind>"``, ``"*:<kind>"`` or ``"*"`` (tried in that order), where the worker
    is a role of :data:`~.workers.WORKER_ROLES` (recognised by its system prompt) and the kind is ``ask``,
    ``reprompt`` (a re-prompt: it carries "New angle:") or ``delegate``; values are lists of texts, sample i
    of a request getting ``texts[i % len(texts)]``. Nothing is cached; the same request always gets the
    same answers."""

    name: ClassVar[str] = "scripted"
    summary: ClassVar[str] = "replies from a script, for labelled illustrations (no model)"
    script: Mapping[str, Sequence[str]] = field(default_factory=dict)

    def __post_init__(self):
        if not isinstance(self.script, Mapping) or not self.script:
            raise ValueError("script must be a non-empty dict like {'direct:ask': ['Canberra', 'Sydney']}")
        for key, texts in self.script.items():
            if isinstance(texts, str) or not texts or not all(isinstance(t, str) for t in texts):
                raise ValueError(f"script[{key!r}] must be a non-empty list of strings, got {texts!r}")

    def model_id(self) -> str:
        return "script"

    def reply(self, system: str, user: str, index: int) -> str:
        role, kind = _role_of(system), _kind_of(user)
        for key in (f"{role}:{kind}", f"*:{kind}", "*"):
            if key in self.script:
                texts = self.script[key]
                return texts[index % len(texts)]
        raise KeyError(f"the script has no reply for worker {role!r}, kind {kind!r}; add '{role}:{kind}', "
                       f"'*:{kind}' or '*' (keys: {sorted(self.script)})")

    def _one(self, request: dict[str, Any], cache: Any, seed: int) -> Completion:
        msgs = request["messages"]
        system = next((m["content"] for m in msgs if m["role"] == "system"), "")
        text = self.reply(system, msgs[-1]["content"], request["index"])
        return Completion(text=text, finish_reason="stop", backend=self.name, model="script", seed=request["seed"],
                          index=request["index"], logprobs=None)
