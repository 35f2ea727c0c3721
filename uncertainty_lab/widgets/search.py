"""Notebook 05's panels and the helpers behind its cells: one CGDP search episode, step by step.

The decisions live in plain functions a test can call without a browser:

- :func:`step_summary` — what step t of an episode did: the action and query, the passages shown (ids and
  titles, which were new), the cost, the exhaustion signals J_t and UPR_t with the streak, every gate's
  decision, and the belief state after the update (findings with their documents and open questions, or the
  truncated history);
- :func:`render_step` — that summary as HTML (what the stepper shows);
- :func:`gate_trace_table` / :func:`draw_gate_trace` — J_t and UPR_t per step against τ_J and τ_U, the streak,
  and where the gate fired;
- :func:`belief_table` — the belief's size per step (findings, open / settled questions, or history entries).

J_t and UPR_t are read from the episode's own ``exhaustion`` gate records; when the episode ran without that
gate they are recomputed from the steps with a default :class:`~uncertainty_lab.search.ExhaustionGate` (τ_J =
0.6, τ_U = 0.3, p = 2, W = 5) and marked "recomputed" — the gate did not stop that episode.

:class:`EpisodeStepper` (from :func:`episode_stepper`) only wires :func:`step_summary` and :func:`render_step`
to a step slider; it shows HTML only (no figure inside an Output widget, which can stall headless runs).
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import ipywidgets as widgets

from ..search import Episode, ExhaustionGate
from ..table import Table

__all__ = [
    "EpisodeStepper",
    "StepSummary",
    "belief_table",
    "draw_gate_trace",
    "episode_stepper",
    "exhaustion_trace",
    "gate_trace_table",
    "render_step",
    "step_summary",
]

_PASSAGE = re.compile(r"^\[(?P<id>[^\]]+)\]\s*(?P<title>[^:\n]*):")


def _titles(episode: Episode, documents: Any = None) -> dict[str, str]:
    """Passage id → title, from ``documents`` (a SearchEnvironment, a list of Documents or a dict) or else from
    the observation texts (``[id] title: text``)."""
    out: dict[str, str] = {}
    for s in episode.steps:
        for line in s.observation.splitlines():
            m = _PASSAGE.match(line.strip())
            if m:
                out.setdefault(m.group("id"), m.group("title").strip())
    if documents is not None:
        docs = getattr(documents, "documents", documents)
        if isinstance(docs, Mapping):
            out.update({k: getattr(v, "title", str(v)) for k, v in docs.items()})
        else:
            out.update({d.id: d.title for d in docs})
    return out


def exhaustion_trace(episode: Episode) -> tuple[list[dict[str, Any]], bool]:
    """(per-step exhaustion signals, live): the episode's own ``exhaustion`` records when it ran that gate
    (``live`` True), else signals recomputed with a default gate (``live`` False). Non-round steps (an answer
    action) carry ``round: False``."""
    if episode.steps and all("exhaustion" in s.gates for s in episode.steps):
        return [dict(s.gates["exhaustion"].get("signals", {}), stop=bool(s.gates["exhaustion"].get("stop")),
                     reason=s.gates["exhaustion"].get("reason", "")) for s in episode.steps], True
    gate = ExhaustionGate()
    out = []
    for s in episode.steps:
        d = gate.update(s)
        out.append(dict(d.signals, stop=d.stop, reason=d.reason))
    return out, False


@dataclass(frozen=True)
class StepSummary:
    """What step ``t`` of an episode did (see :func:`step_summary`)."""

    t: int
    n_steps: int
    question: str
    action: str
    query: str
    passage_ids: tuple[str, ...]
    titles: tuple[str, ...]
    new_ids: tuple[str, ...]
    cost: int
    jaccard: float | None
    upr: float | None
    streak: int | None
    qualifies: bool | None
    signals_live: bool
    tau_j: float
    tau_u: float
    gates: dict[str, dict[str, Any]]
    belief_kind: str
    findings: tuple[str, ...]
    open_questions: tuple[str, ...]
    settled: tuple[str, ...]
    belief_text: str
    update_status: str
    policy_note: str
    stop_here: str | None
    final: dict[str, Any] | None = field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def step_summary(episode: Episode, t: int, documents: Any = None) -> StepSummary:
    """Step ``t`` (1 … len(episode)) of ``episode``: see the module doc. ``documents`` (optional) gives titles."""
    n = len(episode.steps)
    if n == 0:
        raise ValueError("the episode has no steps yet; run it first")
    if isinstance(t, bool) or not isinstance(t, int) or not 1 <= t <= n:
        raise ValueError(f"t must be a step number in 1..{n}, got {t!r}")
    step = episode.steps[t - 1]
    titles = _titles(episode, documents)
    seen_before = {i for s in episode.steps[:t - 1] for i in s.passage_ids}
    trace, live = exhaustion_trace(episode)
    sig = trace[t - 1]
    is_round = bool(sig.get("round", True))
    belief = step.belief or {}
    kind = str(belief.get("kind", "?"))
    if kind == "predicate":
        findings = tuple(f"{f['text']} [{', '.join(f.get('doc_ids', []))}]" for f in belief.get("findings", []))
        preds = belief.get("predicates", [])
        open_qs = tuple(p["text"] for p in preds if p.get("status") == "open")
        settled = tuple(f"{p['text']} — {p['status']}" + (f": {p['note']}" if p.get("note") else "")
                        for p in preds if p.get("status") != "open")
    else:
        findings, open_qs, settled = (), (), ()
    pol = step.policy or {}
    if pol.get("policy") == "heuristic":
        note = f"heuristic rule: {pol.get('rule', '')}"
    elif pol:
        note = f"model reply {str(pol.get('raw', ''))[:80]!r} (parse {pol.get('parse')})"
        if pol.get("fallback"):
            note += "; fell back to searching the question"
    else:
        note = ""
    stop_here = None
    if t == n and episode.final is not None:
        stop_here = f"{episode.final.get('stop_reason')} ({episode.final.get('stop_gate')})"
    return StepSummary(
        t=t, n_steps=n, question=episode.question, action=step.action, query=step.query,
        passage_ids=tuple(step.passage_ids), titles=tuple(titles.get(i, "") for i in step.passage_ids),
        new_ids=tuple(i for i in dict.fromkeys(step.passage_ids) if i not in seen_before), cost=step.cost,
        jaccard=float(sig["jaccard"]) if is_round and "jaccard" in sig else None,
        upr=float(sig["upr"]) if is_round and "upr" in sig else None,
        streak=int(sig["streak"]) if "streak" in sig else None,
        qualifies=bool(sig["qualifies"]) if is_round and "qualifies" in sig else None,
        signals_live=live, tau_j=float(sig.get("tau_j", 0.6)), tau_u=float(sig.get("tau_u", 0.3)), gates={k: dict(v) for k, v in step.gates.items()}, belief_kind=kind,
        findings=findings, open_questions=open_qs, settled=settled, belief_text=str(belief.get("text", "")),
        update_status=str((step.update or {}).get("status", "")), policy_note=note, stop_here=stop_here,
        final=episode.final if t == n else None,
    )


def _esc(x: Any) -> str:
    return html.escape(str(x))


def _fmt(x: float | None) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.2f}"


def render_step(summary: StepSummary) -> str:
    """The HTML the stepper shows for one :class:`StepSummary`."""
    s = summary
    parts = ["<div style='font-family:sans-serif;font-size:13px'>",
             f"<b>step {s.t} of {s.n_steps}</b> · <code>{_esc(s.action.upper())}: {_esc(s.query)}</code>"]
    if s.policy_note:
        parts.append(f"<br><small style='color:#555'>{_esc(s.policy_note)}</small>")
    if s.passage_ids:
        new = " <b style='color:#2a7'>new</b>"
        items = "".join(f"<li><code>{_esc(i)}</code> {_esc(title)}{new if i in s.new_ids else ''}</li>"
                        for i, title in zip(s.passage_ids, s.titles, strict=True))
        parts.append(f"<p>observation ({s.cost} tokens): <ul style='margin:2px'>{items}</ul></p>")
    else:
        parts.append(f"<p>observation: no passage ({s.cost} tokens)</p>")
    src = "" if s.signals_live else " <small>(recomputed: the exhaustion gate did not run in this episode)</small>"
    if s.jaccard is not None:
        qual = "qualifies" if s.qualifies else "does not qualify"
        parts.append(f"<p>exhaustion signals{src}: J = <b>{_fmt(s.jaccard)}</b> (τ_J {s.tau_j:g}), UPR = "
                     f"<b>{_fmt(s.upr)}</b> (τ_U {s.tau_u:g}) → round {qual}; streak {s.streak}</p>")
    else:
        parts.append(f"<p>exhaustion signals{src}: not a search round (streak {s.streak})</p>")
    if s.gates:
        rows = "".join(f"<li><code>{_esc(name)}</code>: {'<b>STOP</b>' if d.get('stop') else 'continue'} — "
                       f"{_esc(d.get('reason', ''))}</li>" for name, d in s.gates.items())
        parts.append(f"<p>gates:<ul style='margin:2px'>{rows}</ul></p>")
    if s.belief_kind == "predicate":
        f_items = "".join(f"<li>{_esc(f)}</li>" for f in s.findings) or "<li><i>none yet</i></li>"
        o_items = "".join(f"<li>{_esc(q)}</li>" for q in s.open_questions) or "<li><i>none</i></li>"
        d_items = "".join(f"<li>{_esc(q)}</li>" for q in s.settled)
        parts.append(f"<p>belief (predicate; update {_esc(s.update_status)}):<br>findings<ul style='margin:2px'>"
                     f"{f_items}</ul>open questions<ul style='margin:2px'>{o_items}</ul>"
                     + (f"settled<ul style='margin:2px'>{d_items}</ul>" if d_items else "") + "</p>")
    else:
        parts.append(f"<p>belief ({_esc(s.belief_kind)}): <pre style='white-space:pre-wrap;max-height:12em;"
                     f"overflow:auto;font-size:11px'>{_esc(s.belief_text)}</pre></p>")
    if s.stop_here:
        ans = (s.final or {}).get("answer", {})
        valid = "valid" if ans.get("valid") else f"invalid: {ans.get('failure')}"
        parts.append(f"<p style='color:#a33'><b>stopped: {_esc(s.stop_here)}</b> — final answer "
                     f"<code>{_esc(ans.get('text', ''))}</code> ({_esc(valid)})</p>")
    parts.append("</div>")
    return "".join(parts)


def gate_trace_table(episode: Episode) -> Table:
    """Per step: the query, the ids shown (new ones starred), J_t, UPR_t, whether the round qualifies, the
    streak and whether the exhaustion gate said stop."""
    trace, live = exhaustion_trace(episode)
    seen: set[str] = set()
    rows = []
    for s, sig in zip(episode.steps, trace, strict=True):
        ids = " ".join(f"{i}{'*' if i not in seen else ''}" for i in s.passage_ids)
        seen.update(s.passage_ids)
        is_round = bool(sig.get("round", True))
        rows.append({"t": s.t, "action": s.action, "query": s.query[:70], "ids (* new)": ids,
                     "J": float(sig["jaccard"]) if is_round else math.nan,
                     "UPR": float(sig["upr"]) if is_round else math.nan,
                     "qualifies": bool(sig.get("qualifies", False)), "streak": int(sig.get("streak", 0)),
                     "stop": bool(sig.get("stop", False))})
    title = "exhaustion gate trace" + ("" if live else " (recomputed: the gate did not run in this episode)")
    return Table(rows, columns=["t", "action", "query", "ids (* new)", "J", "UPR", "qualifies", "streak", "stop"],
                 title=title)


def draw_gate_trace(episode: Episode, ax: Any = None, tau_j: float | None = None, tau_u: float | None = None):
    """J_t and UPR_t per step with τ_J and τ_U (from the episode's gate, else 0.6 / 0.3), qualifying rounds
    shaded and the step where the gate fired marked. Returns the figure."""
    import matplotlib.pyplot as plt

    trace, live = exhaustion_trace(episode)
    if tau_j is None:
        tau_j = next((float(x["tau_j"]) for x in trace if "tau_j" in x), 0.6)
    if tau_u is None:
        tau_u = next((float(x["tau_u"]) for x in trace if "tau_u" in x), 0.3)
    fig = None
    if ax is None:
        fig, ax = plt.subplots(figsize=(6.5, 3.2), layout="constrained")
    ts = [s.t for s, x in zip(episode.steps, trace, strict=True) if x.get("round", True)]
    js = [float(x["jaccard"]) for x in trace if x.get("round", True)]
    us = [float(x["upr"]) for x in trace if x.get("round", True)]
    for s, x in zip(episode.steps, trace, strict=True):
        if x.get("qualifies"):
            ax.axvspan(s.t - 0.4, s.t + 0.4, color="tab:red", alpha=0.12, lw=0)
    ax.plot(ts, js, "o-", color="tab:blue", label="J_t (query similarity)")
    ax.plot(ts, us, "s-", color="tab:green", label="UPR_t (unique-passage rate)")
    ax.axhline(tau_j, color="tab:blue", ls="--", lw=1, label=f"τ_J = {tau_j:g} (J ≥ τ_J)")
    ax.axhline(tau_u, color="tab:green", ls=":", lw=1, label=f"τ_U = {tau_u:g} (UPR ≤ τ_U)")
    fired = [s.t for s, x in zip(episode.steps, trace, strict=True) if x.get("stop")]
    if fired:
        ax.axvline(fired[0], color="tab:red", lw=2, label=f"gate fires (t = {fired[0]})")
    ax.set_xlabel("step t (shaded: round qualifies)")
    ax.set_ylim(-0.05, 1.05)
    ax.set_xticks([s.t for s in episode.steps])
    ax.set_title("exhaustion signals" + ("" if live else " (recomputed)"))
    ax.legend(fontsize="x-small", loc="center left", bbox_to_anchor=(1.0, 0.5))
    ax.grid(alpha=0.3)
    return fig if fig is not None else ax.figure


def belief_table(episode: Episode) -> Table:
    """The belief's size after each step: findings, open / settled questions and its tokens (predicate), or
    history entries, dropped steps and tokens (implicit)."""
    rows = []
    for s in episode.steps:
        b = s.belief or {}
        if b.get("kind") == "predicate":
            preds = b.get("predicates", [])
            rows.append({"t": s.t, "kind": "predicate", "findings": len(b.get("findings", [])),
                         "open": sum(p.get("status") == "open" for p in preds),
                         "settled": sum(p.get("status") != "open" for p in preds), "history entries": math.nan,
                         "dropped": math.nan, "tokens": b.get("tokens", math.nan),
                         "update": (s.update or {}).get("status", "")})
        else:
            rows.append({"t": s.t, "kind": b.get("kind", "?"), "findings": math.nan, "open": math.nan,
                         "settled": math.nan, "history entries": len(b.get("entries", [])),
                         "dropped": b.get("dropped", 0), "tokens": b.get("tokens", math.nan),
                         "update": (s.update or {}).get("status", "")})
    return Table(rows, title="belief state after each step")


class EpisodeStepper(widgets.VBox):
    """A step slider over one episode; the panel shows :func:`render_step` of :func:`step_summary` at the
    slider's step. ``.slider``, ``.panel`` (HTML), ``.summary`` (the shown :class:`StepSummary`);
    ``.show(t)`` moves the slider and returns the summary."""

    def __init__(self, episode: Episode, *, documents: Any = None, t: int | None = None):
        super().__init__()
        if not episode.steps:
            raise ValueError("the episode has no steps yet; run it first")
        self.episode, self.documents = episode, documents
        n = len(episode.steps)
        self.slider = widgets.IntSlider(value=int(t or 1), min=1, max=n, step=1, description="step",
                                        continuous_update=False, layout={"width": "420px"})
        head = (f"<b>{html.escape(episode.question)}</b><br><small>{n} step(s); stop: "
                f"{html.escape(str(episode.stop_reason))} ({html.escape(str(episode.stop_gate))}); answer "
                f"<code>{html.escape(episode.answer)}</code></small>")
        self.header = widgets.HTML(head)
        self.panel = widgets.HTML()
        self.summary: StepSummary | None = None
        self._syncing = False
        self.slider.observe(self._on_change, names="value")
        self.children = (self.header, self.slider, self.panel)
        self.show(self.slider.value)

    def _on_change(self, change) -> None:
        if not self._syncing:
            self.show(int(change["new"]))

    def show(self, t: int) -> StepSummary:
        """Show step ``t`` (and move the slider there)."""
        summary = step_summary(self.episode, t, self.documents)
        self.summary = summary
        self.panel.value = render_step(summary)
        if self.slider.value != t:
            self._syncing = True
            try:
                self.slider.value = t
            finally:
                self._syncing = False
        return summary


def episode_stepper(episode: Episode, *, documents: Any = None, t: int | None = None) -> EpisodeStepper:
    """A slider over the steps of ``episode`` showing, at each step, the query, the passages shown (ids, titles,
    which are new), the exhaustion signals J_t and UPR_t, every gate's decision and the belief state."""
    return EpisodeStepper(episode, documents=documents, t=t)
