"""What the coordinator returns for one question: its :class:`Trace` — the :class:`Round` s (each with its
:class:`Candidate` answers, the signals the policy read and its decision) and the :class:`FinalAnswer`.

Every type round-trips through ``to_dict`` / ``from_dict`` (JSON values; a missing signal is written as
``null``), which is how a run file stores one question's trace.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..jsonsafe import jsonable
from .policy import Decision, Signals
from .workers import WorkerAnswer

__all__ = ["Candidate", "FinalAnswer", "Round", "Trace"]


@dataclass
class Candidate:
    """One worker answer with the signals the policy read and the metric results they came from."""

    answer: WorkerAnswer
    signals: Signals
    metrics: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"answer": self.answer.to_dict(), "signals": self.signals.to_dict(), "metrics": jsonable(self.metrics)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Candidate:
        return cls(WorkerAnswer.from_dict(d["answer"]), Signals.from_dict(d["signals"]), dict(d.get("metrics") or {}))


@dataclass
class Round:
    """One round: how its answers were obtained (``action``: ask, reprompt, reassign, delegate), the
    ``candidates`` (several after a delegation), the ``chosen`` one, and the policy's ``decision``."""

    round: int
    action: str
    candidates: list[Candidate]
    chosen: int
    decision: Decision

    @property
    def candidate(self) -> Candidate:
        return self.candidates[self.chosen]

    @property
    def signals(self) -> Signals:
        return self.candidate.signals

    def to_dict(self) -> dict[str, Any]:
        return {"round": self.round, "action": self.action, "chosen": self.chosen,
                "candidates": [c.to_dict() for c in self.candidates], "decision": self.decision.to_dict()}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Round:
        return cls(d["round"], d["action"], [Candidate.from_dict(c) for c in d["candidates"]], d["chosen"],
                   Decision.from_dict(d["decision"]))


@dataclass(frozen=True)
class FinalAnswer:
    """The answer a run returns: text (extracted) and ``raw`` completion, where it came from (``round``,
    ``candidate``, ``worker``), the ``exit`` (accept / final_select), whether it is ``valid``, and a ``note``
    from validation."""

    answer: str
    raw: str
    round: int
    candidate: int
    worker: str
    exit: str
    valid: bool
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> FinalAnswer:
        return cls(**{f.name: d[f.name] for f in dataclasses.fields(cls) if f.name in d})


@dataclass
class Trace:
    """Everything one question's run did: ``rounds`` (each with its decision and the signals behind it),
    the ``final`` answer, ``model_calls`` (generations, incl. rephrasing), ``cached_calls``, ``wall_time_s``
    and the judge's cache ``judge_hits`` / ``judge_misses`` during the run."""

    question: str
    policy: str
    rounds: list[Round]
    final: FinalAnswer
    model_calls: int = 0
    cached_calls: int = 0
    wall_time_s: float = 0.0
    judge_hits: int = 0
    judge_misses: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def answer(self) -> str:
        return self.final.answer

    @property
    def decisions(self) -> list[Decision]:
        return [r.decision for r in self.rounds]

    @property
    def actions(self) -> list[str]:
        return [r.decision.action for r in self.rounds]

    @property
    def first_signals(self) -> Signals:
        return self.rounds[0].signals

    def describe(self) -> str:
        """A plain-text trace: one line per round, then the final answer."""
        lines = [f"Q: {self.question}  [policy {self.policy}]"]
        for r in self.rounds:
            s = r.signals
            sig = f"H/ln n={_show(s.entropy)} D={_show(s.density)}"
            who = ", ".join(c.answer.worker for c in r.candidates)
            lines.append(f"  round {r.round} {r.action:<8} ({who}) -> {r.candidate.answer.answer!r:.60}  {sig}")
            lines.append(f"      {r.decision.action}: {r.decision.reason}")
        f = self.final
        lines.append(f"  final ({f.exit}, round {f.round}, {f.worker}{'' if f.valid else ', INVALID'}): {f.answer!r}"
                     + (f"  [{f.note}]" if f.note else ""))
        lines.append(f"  {self.model_calls} model calls ({self.cached_calls} cached), {self.wall_time_s:.2f} s")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {"question": self.question, "policy": self.policy, "rounds": [r.to_dict() for r in self.rounds],
                "final": self.final.to_dict(), "model_calls": self.model_calls, "cached_calls": self.cached_calls,
                "wall_time_s": self.wall_time_s, "judge_hits": self.judge_hits, "judge_misses": self.judge_misses,
                "notes": list(self.notes)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Trace:
        return cls(d["question"], d["policy"], [Round.from_dict(r) for r in d["rounds"]], FinalAnswer.from_dict(d["final"]),
                   d.get("model_calls", 0), d.get("cached_calls", 0), d.get("wall_time_s", 0.0), d.get("judge_hits", 0),
                   d.get("judge_misses", 0), list(d.get("notes", [])))


def _show(x: float) -> str:
    return "missing" if math.isnan(x) else f"{x:.2f}"
