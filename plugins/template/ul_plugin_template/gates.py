"""A ``stopping_gates`` plugin: a step budget plus a repeated-query check.

Protocol (see ``uncertainty_lab.contracts.gates``): ``reset()`` forgets the episode; ``update(step) ->
GateDecision(stop, reason, signals)`` reads one completed search step (``step.action`` is "search", "read"
or "answer"; ``step.query`` its argument; ``step.passage_ids`` what it retrieved). The agent calls
``update`` once per step, in order; the episode stops when any gate says stop. ``stop_kind`` names the
stop reason in the episode's record ("exhausted", "budget" or "answered").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from uncertainty_lab.contracts import GateDecision, StoppingGate


def _normalise(query: str) -> str:
    return " ".join(query.lower().split())


@dataclass
class MaxStepsOrRepeatGate(StoppingGate):
    """Stops after ``max_steps`` steps, or as soon as one query (search or read, compared lower-cased with
    whitespace collapsed) has been issued ``repeats`` times: the agent is going round in circles.

    A blunt version of the paper's ``exhaustion`` gate: an exact repeat, not a Jaccard similarity, and no
    look at what the repeated query brought back.
    """

    name: ClassVar[str] = "max_steps_or_repeat"
    summary: ClassVar[str] = "stop after max_steps steps, or when one query has been issued `repeats` times (template)"
    reference: ClassVar[str] = "uncertainty-lab plugin template"
    stop_kind: ClassVar[str] = "exhausted"  # an instance says "budget" when it stopped on the step budget

    max_steps: int = field(default=10, metadata={"min": 1, "max": 100, "step": 1, "help": "steps before stopping"})
    repeats: int = field(
        default=2, metadata={"min": 2, "max": 10, "step": 1, "help": "stop when one query has been issued this many times"}
    )

    def __post_init__(self):
        self.reset()

    def reset(self) -> None:
        self._steps = 0
        self._counts: dict[str, int] = {}

    def update(self, step: Any) -> GateDecision:
        self._steps += 1
        action = str(getattr(step, "action", "search") or "search")
        query = f"{action} {_normalise(str(getattr(step, 'query', '') or ''))}"
        count = 0
        if action in ("search", "read"):
            count = self._counts[query] = self._counts.get(query, 0) + 1
        signals = {"steps": self._steps, "max_steps": self.max_steps, "query": query, "times_issued": count,
                   "repeats": self.repeats}
        if count >= self.repeats:
            self.stop_kind = "exhausted"
            return GateDecision(True, f"repeat: {query!r} issued {count} times", signals)
        if self._steps >= self.max_steps:
            self.stop_kind = "budget"
            return GateDecision(True, f"budget: {self._steps} of {self.max_steps} steps used", signals)
        return GateDecision(False, f"{self._steps} of {self.max_steps} steps; {query!r} issued {count} time(s)", signals)
