"""The ``stopping_gates`` contract: a gate reads each completed search step and says whether to stop, and why.

Protocol: ``reset()`` forgets the episode; ``update(step) -> GateDecision(stop, reason, signals)`` reads one
completed step (its ``action``, ``query``, ``passage_ids``, ``belief`` snapshot); ``restore(steps)`` (optional)
rebuilds the state from recorded steps when an episode resumes. The agent calls ``update`` once per step, in
order; the episode stops when any gate says stop. A gate's ``stop_kind`` is the stop reason its stops count as
in the experiment's tables ("exhausted", "answered", "budget" for the built-ins; a plugin may name its own and
it is counted as it is).

These types live in the core (not in the search lab) so that a gate plugin imports only the core.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

__all__ = ["GateDecision", "StoppingGate"]


@dataclass(frozen=True)
class GateDecision:
    """What a gate says after one step: ``stop``, a human ``reason`` and the ``signals`` it computed."""

    stop: bool
    reason: str
    signals: dict[str, Any] = field(default_factory=dict)

    def to_record(self) -> dict[str, Any]:
        return {"stop": self.stop, "reason": self.reason, "signals": dict(self.signals)}

    @classmethod
    def from_record(cls, rec: dict[str, Any]) -> GateDecision:
        return cls(bool(rec["stop"]), rec.get("reason", ""), dict(rec.get("signals", {})))


@dataclass
class StoppingGate:
    """Base of a ``stopping_gates`` plugin. Subclasses set ``name``, ``summary``, ``stop_kind`` and implement
    :meth:`update`; :meth:`restore` rebuilds the state from already-recorded steps (resume)."""

    name: ClassVar[str] = "base"
    summary: ClassVar[str] = ""
    reference: ClassVar[str] = ""
    stop_kind: ClassVar[str] = "answered"

    def reset(self) -> None:
        """Forget everything seen this episode."""

    def update(self, step: Any) -> GateDecision:
        raise NotImplementedError

    def restore(self, steps: list[Any]) -> None:
        """Bring the gate to the state it had after ``steps`` (default: reset, then replay ``update``)."""
        self.reset()
        for s in steps:
            self.update(s)
