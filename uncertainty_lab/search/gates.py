"""Stopping gates: ``stopping_gates`` registry plugins that decide after each search step whether to stop.

Protocol: ``reset()`` forgets the episode; ``update(step) -> GateDecision(stop, reason, signals)`` reads one
completed :class:`~uncertainty_lab.search.record.SearchStep` (its action, ``query``, ``passage_ids``, belief
snapshot). The agent calls ``update`` once per step, in order, after the step's observation and belief update;
the episode stops when any gate says stop (PBAI's "evaluate stop" for the next iteration), and every exit goes
through the same final-answer step. ``stop_kind`` says which stop reason a gate gives: "exhausted", "budget" or
"answered" for the built-ins; a plugin may name its own, and the experiment's tables count it as it is. The
types live in :mod:`uncertainty_lab.contracts.gates` (re-exported here).

Built-ins:

- ``exhaustion`` — the paper's programmatic gate. For step t with action text a_t and passage ids C_t:
  J_t = max_{t-W ≤ i < t} Jaccard(tok(a_t), tok(a_i)) (0 when there is no earlier action) and
  UPR_t = |C_t \\ ∪_{i<t} C_i| / max(1, |C_t|) with C_t the *set* of ids (a passage retrieved twice in one
  round counts once); round t *qualifies* when J_t ≥ τ_J and UPR_t ≤ τ_U; the gate fires at the p-th
  consecutive qualifying round. Lexical Jaccard (no embeddings). tok = lower-cased
  alphanumeric tokens. An empty retrieval has UPR 0 and counts as "no novelty". Only search and read actions
  are rounds (a read's action text is ``read <doc id>``, so re-reading one file is a repeat); an ``answer``
  action is not a round: it neither extends nor breaks the streak and does not enter the window.
- ``fixed_budget`` — stop after ``max_steps`` steps.
- ``llm_self_stop`` — stop when the model's own action was ``answer`` (FINISH).
- ``belief_complete`` — stop when the predicate belief has no open question left (and holds at least one
  finding); it cannot judge the implicit belief and says so.
- ``answer_convergence`` — sample m candidate answers from the current state, cluster them with an
  equivalence judge and stop when the normalised discrete semantic entropy H / ln m ≤ ``threshold``.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..contracts.gates import GateDecision, StoppingGate
from .text import action_tokens, jaccard

__all__ = [
    "AnswerConvergenceGate",
    "BeliefCompleteGate",
    "ExhaustionGate",
    "FixedBudgetGate",
    "GateDecision",
    "LLMSelfStopGate",
    "StoppingGate",
    "exhaustion_signals",
    "make_gates",
]

ROUND_ACTIONS = ("search", "read")


def _action_text(step: Any) -> str:
    text = getattr(step, "action_text", None)
    if isinstance(text, str):
        return text
    return str(getattr(step, "query", "") or "")


def _action(step: Any) -> str:
    return str(getattr(step, "action", "search") or "search")


def exhaustion_signals(queries: list[str], passage_ids: list[list[str]], window: int = 5) -> list[dict[str, float]]:
    """J_t and UPR_t for a plain sequence of rounds (for plots and hand checks)."""
    gate = ExhaustionGate(window=window, p=10**6)
    from .record import SearchStep

    return [dict(gate.update(SearchStep(q, tuple(ids))).signals) for q, ids in zip(queries, passage_ids, strict=True)]


@dataclass
class ExhaustionGate(StoppingGate):
    """Stops when the last ``p`` rounds all repeat a recent action (Jaccard ≥ τ_J over the last ``window``
    actions) and bring almost nothing new (unique-passage rate ≤ τ_U)."""

    name: ClassVar[str] = "exhaustion"
    summary: ClassVar[str] = "stop when p consecutive rounds repeat a recent query (Jaccard ≥ τ_J) and find few new passages (UPR ≤ τ_U)"
    reference: ClassVar[str] = "Kausik, Swaminathan, Kallus 2026, CGDP §6 (configuration f_j0.6_u0.3_p2)"
    stop_kind: ClassVar[str] = "exhausted"

    tau_j: float = field(default=0.6, metadata={"min": 0.0, "max": 1.0, "step": 0.05,
                                                "help": "τ_J: a round repeats a recent action when max Jaccard ≥ τ_J"})
    tau_u: float = field(default=0.3, metadata={"min": 0.0, "max": 1.0, "step": 0.05,
                                                "help": "τ_U: a round brings nothing new when its unique-passage rate ≤ τ_U"})
    p: int = field(default=2, metadata={"min": 1, "max": 10, "step": 1,
                                        "help": "consecutive qualifying rounds needed to fire"})
    window: int = field(default=5, metadata={"min": 1, "max": 50, "step": 1,
                                             "help": "W: how many earlier actions the Jaccard looks back over"})

    def __post_init__(self):
        self.reset()

    def reset(self) -> None:
        self._recent: deque[frozenset[str]] = deque(maxlen=self.window)
        self._seen: set[str] = set()
        self._streak = 0
        self._rounds = 0

    def update(self, step: Any) -> GateDecision:
        if _action(step) not in ROUND_ACTIONS:
            return GateDecision(False, f"{_action(step)} action is not a search round; streak stays {self._streak}",
                                {"round": False, "streak": self._streak, "p": self.p})
        tokens = action_tokens(_action_text(step))
        ids = list(getattr(step, "passage_ids", ()) or ())
        if self._recent:
            sims = [jaccard(tokens, prev) for prev in self._recent]
            j = max(sims)
        else:
            j = 0.0
        distinct = list(dict.fromkeys(ids))  # C_t as a set: the rate is over distinct passages
        new = [i for i in distinct if i not in self._seen]
        upr = len(new) / max(1, len(distinct))
        qualifies = j >= self.tau_j and upr <= self.tau_u
        self._streak = self._streak + 1 if qualifies else 0
        self._recent.append(tokens)
        self._seen.update(ids)
        self._rounds += 1
        signals = {"round": True, "jaccard": j, "upr": upr, "n_passages": len(ids), "n_distinct": len(distinct),
                   "n_new": len(new),
                   "qualifies": qualifies, "streak": self._streak, "p": self.p, "tau_j": self.tau_j,
                   "tau_u": self.tau_u, "window": self.window}
        if self._streak >= self.p:
            return GateDecision(True, f"exhausted: {self._streak} consecutive rounds with Jaccard ≥ {self.tau_j} and "
                                      f"unique-passage rate ≤ {self.tau_u} (now J = {j:.2f}, UPR = {upr:.2f})", signals)
        why = []
        if j < self.tau_j:
            why.append(f"J = {j:.2f} < {self.tau_j}")
        if upr > self.tau_u:
            why.append(f"UPR = {upr:.2f} > {self.tau_u}")
        reason = ("round qualifies; streak " + f"{self._streak}/{self.p}") if qualifies else \
            f"continue: {' and '.join(why)}"
        return GateDecision(False, reason, signals)


@dataclass
class FixedBudgetGate(StoppingGate):
    """Stops after a fixed number of steps."""

    name: ClassVar[str] = "fixed_budget"
    summary: ClassVar[str] = "stop after max_steps steps, whatever happened"
    stop_kind: ClassVar[str] = "budget"

    max_steps: int = field(default=8, metadata={"min": 1, "max": 100, "step": 1, "help": "steps before stopping"})

    def __post_init__(self):
        self.reset()

    def reset(self) -> None:
        self._n = 0

    def update(self, step: Any) -> GateDecision:
        self._n += 1
        signals = {"steps": self._n, "max_steps": self.max_steps}
        if self._n >= self.max_steps:
            return GateDecision(True, f"budget: {self._n} of {self.max_steps} steps used", signals)
        return GateDecision(False, f"{self._n} of {self.max_steps} steps used", signals)


@dataclass
class LLMSelfStopGate(StoppingGate):
    """Stops when the model chose to answer (its FINISH action)."""

    name: ClassVar[str] = "llm_self_stop"
    summary: ClassVar[str] = "stop when the model's own action was ANSWER (its self-assessment)"
    stop_kind: ClassVar[str] = "answered"

    def update(self, step: Any) -> GateDecision:
        action = _action(step)
        if action == "answer":
            return GateDecision(True, f"the model chose to answer: {_action_text(step)[:80]!r}", {"action": action})
        return GateDecision(False, f"the model chose to {action}", {"action": action})


def _belief(step: Any) -> dict[str, Any] | None:
    b = getattr(step, "belief", None)
    return b if isinstance(b, dict) else None


@dataclass
class BeliefCompleteGate(StoppingGate):
    """Stops when the predicate belief has no open question left (and at least one finding)."""

    name: ClassVar[str] = "belief_complete"
    summary: ClassVar[str] = "stop when the predicate belief has no open question left"
    stop_kind: ClassVar[str] = "answered"

    def update(self, step: Any) -> GateDecision:
        b = _belief(step)
        if b is None or b.get("kind") != "predicate":
            kind = None if b is None else b.get("kind")
            return GateDecision(False, f"cannot judge: the {kind or 'missing'} belief has no open questions to check; "
                                       "continue", {"judged": False, "belief": kind})
        preds = b.get("predicates", [])
        open_ = [p["text"] for p in preds if p.get("status") == "open"]
        n_facts = len(b.get("findings", []))
        signals = {"judged": True, "open": len(open_), "satisfied": sum(p.get("status") == "satisfied" for p in preds),
                   "refuted": sum(p.get("status") == "refuted" for p in preds), "findings": n_facts}
        if open_:
            return GateDecision(False, f"{len(open_)} open question(s) left, e.g. {open_[0][:60]!r}", signals)
        if n_facts == 0:
            return GateDecision(False, "no open question, but no finding either: an empty belief is not a complete one",
                                signals)
        return GateDecision(True, f"belief complete: no open question left, {n_facts} finding(s)", signals)


@dataclass
class AnswerConvergenceGate(StoppingGate):
    """Samples ``m`` answers from the current state and stops when ``metric``'s normalised uncertainty over them
    is ≤ ``threshold``: by default the normalised discrete semantic entropy H / ln m (HASSUM Eq. 1), clustered by
    ``judge``; any registered metric by name (``judge`` goes to it when it takes one).

    ``llm``: a backend or a spec for ``get_llm``; ``None`` = the agent's model (the agent binds it). Empty or
    abstaining answers do not count as agreement: with fewer than 2 real answers the gate continues.
    """

    name: ClassVar[str] = "answer_convergence"
    summary: ClassVar[str] = ("stop when m answers sampled from the state agree (a metric's normalised uncertainty, "
                              "by default semantic entropy, ≤ threshold)")
    reference: ClassVar[str] = "Farquhar et al. 2024 (semantic entropy) as a stop rule; HASSUM Eq. 1"
    stop_kind: ClassVar[str] = "answered"

    m: int = field(default=5, metadata={"min": 2, "max": 20, "step": 1, "help": "answers sampled per step"})
    threshold: float = field(default=0.3, metadata={"min": 0.0, "max": 1.0, "step": 0.05,
                                                    "help": "stop when the normalised uncertainty ≤ threshold"})
    metric: str = field(default="discrete_semantic_entropy", metadata={
        "help": "a registered metric name; its normalised uncertainty over the m answers is compared"})
    judge: Any = field(default="exact", metadata={"help": "equivalence judge name (exact, embedding, llm_entailment) or instance"})
    temperature: float = field(default=1.0, metadata={"min": 0.0, "max": 2.0, "step": 0.1, "help": "sampling temperature"})
    max_tokens: int = field(default=16, metadata={"min": 1, "max": 256, "step": 1, "help": "tokens per sampled answer"})
    seed: int = field(default=0, metadata={"min": 0, "max": 2**31 - 1, "step": 1, "help": "base seed (per step: seed, t)"})
    llm: Any = field(default=None, metadata={"help": "a backend or spec; None = the agent's model"})

    def __post_init__(self):
        from .. import registry

        registry.get("metrics", self.metric)  # an unknown name fails here, listing the metrics there are
        self._metric = None
        self._backend = None

    def bind(self, llm: Any) -> None:
        """Use ``llm`` when none was given (the agent calls this with its own model)."""
        if self.llm is None:
            self._backend = llm

    def _llm(self):
        if self._backend is None:
            if self.llm is None:
                raise ValueError("answer_convergence needs a language model: pass llm= (a backend or 'embedded'), "
                                 "or run it inside run_episode, which binds the agent's model")
            from ..llm import as_backend

            self._backend = as_backend(self.llm, what="answer_convergence's llm", error=ValueError)
        return self._backend

    def scorer(self):
        """The metric instance (created on first use; ``judge`` passed when the metric declares one)."""
        if self._metric is None:
            from .. import registry

            self._metric = registry.resolve("metrics", self.metric, what="answer_convergence's metric",
                                            defaults={"judge": self.judge})
        return self._metric

    def restore(self, steps: list[Any]) -> None:
        """Stateless across steps: nothing to replay."""
        self.reset()

    def update(self, step: Any) -> GateDecision:
        from ..semantic import SampleSet
        from .answer import extract_answer
        from .prompts import answer_messages
        from .record import step_seed
        from .text import count_tokens

        b = _belief(step)
        state = b.get("text", "") if b else ""
        question = str(getattr(step, "question", "") or "")
        t = int(getattr(step, "t", 0) or 0)
        seed = step_seed(self.seed, t, "convergence")
        msgs = answer_messages(question, state)
        comps = self._llm().complete(msgs, n=self.m, temperature=self.temperature, max_tokens=self.max_tokens,
                                     seed=seed)
        raw = [c.text for c in comps]
        tokens = {"prompt": self.m * sum(count_tokens(x["content"]) for x in msgs),
                  "completion": sum(count_tokens(r) for r in raw), "calls": self.m}
        answers = [extract_answer(r, (msgs[0]["content"], question)) for r in raw]  # echoes stripped, as at the end
        real = [a.text for a in answers if a.valid]
        signals: dict[str, Any] = {"m": self.m, "answers": [a.text for a in answers], "n_valid": len(real),
                                   "threshold": self.threshold, "seed": seed, "tokens": tokens}
        if len(real) < 2:
            signals.update(metric=self.metric, uncertainty=math.nan, normalised_uncertainty=math.nan)
            return GateDecision(False, f"only {len(real)} of {self.m} sampled answers are real answers; continue",
                                signals)
        result = self.scorer().score(SampleSet.from_texts(real, question=question))
        norm = result.normalised_uncertainty
        signals.update(metric=self.metric, uncertainty=result.uncertainty, normalised_uncertainty=norm,
                       n_clusters=result.details.get("n_clusters"), judge=result.details.get("judge"))
        if result.missing:
            return GateDecision(False, f"{self.metric} not computable ({result.details.get('missing')}); continue",
                                signals)
        if norm <= self.threshold:
            return GateDecision(True, f"answers converged: normalised {self.metric} {norm:.2f} ≤ {self.threshold} "
                                      f"over {len(real)} answers", signals)
        return GateDecision(False, f"answers disagree: normalised {self.metric} {norm:.2f} > {self.threshold}", signals)


def make_gates(gates: Any, *, what: str | None = "gates") -> list[Any]:
    """Gate instances from names, ``(name, params)`` pairs, ``{"name":…, **params}`` tables or instances, each
    through :func:`uncertainty_lab.registry.resolve` (errors name ``what[i]``; ``what=None``: no prefix). A gate
    may appear once: its decisions are keyed by its name."""
    from .. import registry

    if gates is None:
        return []
    if isinstance(gates, (str, dict)) or not isinstance(gates, (list, tuple)):
        gates = [gates]
    out = [registry.resolve("stopping_gates", g, what=f"{what}[{i}]" if what else None) for i, g in enumerate(gates)]
    names = [getattr(g, "name", type(g).__name__) for g in out]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"gate {dup[0]!r} is given twice; each gate may appear once (its decisions are keyed by name)")
    return out
