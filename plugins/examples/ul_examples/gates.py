"""``novelty_decay``: a stopping gate that stops when new passages stop coming.

Per search round t (a ``search`` or ``read`` step; ``answer`` steps are not rounds) the unique-passage rate
is the same as in the paper's ``exhaustion`` gate, UPR_t = |C_t \\ ∪_{i<t} C_i| / max(1, |C_t|) (an empty
retrieval counts as UPR 0). It is smoothed exponentially,

    r_1 = UPR_1,    r_t = γ · UPR_t + (1 − γ) · r_{t−1},

and the gate stops at the first round t ≥ ``min_rounds`` with r_t < ``threshold``. Unlike ``exhaustion`` it
does not ask whether the queries repeat: a search that keeps rephrasing but keeps finding the same passages
is stopped too, and one lucky round does not reset a streak, it only lifts the average.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from uncertainty_lab.contracts import GateDecision, StoppingGate


@dataclass
class NoveltyDecayGate(StoppingGate):
    """Stops when the exponentially smoothed unique-passage rate falls below ``threshold``."""

    name: ClassVar[str] = "novelty_decay"
    summary: ClassVar[str] = "stop when the smoothed rate of new passages per round falls below a threshold (ul_examples)"
    reference: ClassVar[str] = "UPR as in CGDP's exhaustion gate (Kausik et al. 2026 §6), smoothed (ul_examples)"
    stop_kind: ClassVar[str] = "exhausted"

    smoothing: float = field(default=0.5, metadata={"min": 0.05, "max": 1.0, "step": 0.05,
                                                    "help": "γ: weight of the newest round (1 = no smoothing)"})
    threshold: float = field(default=0.2, metadata={"min": 0.0, "max": 1.0, "step": 0.05,
                                                    "help": "stop when the smoothed unique-passage rate is below this"})
    min_rounds: int = field(default=2, metadata={"min": 1, "max": 20, "step": 1,
                                                 "help": "never stop before this many search rounds"})

    def __post_init__(self):
        self.reset()

    def reset(self) -> None:
        self._seen: set[str] = set()
        self._rate: float | None = None
        self._rounds = 0

    def update(self, step: Any) -> GateDecision:
        action = str(getattr(step, "action", "search") or "search")
        if action not in ("search", "read"):
            return GateDecision(False, f"{action} action is not a search round", {"round": False, "rounds": self._rounds,
                                                                                  "smoothed_upr": self._rate})
        ids = list(getattr(step, "passage_ids", ()) or ())
        new = [i for i in dict.fromkeys(ids) if i not in self._seen]
        upr = len(new) / max(1, len(ids))
        self._seen.update(ids)
        self._rounds += 1
        self._rate = upr if self._rate is None else self.smoothing * upr + (1.0 - self.smoothing) * self._rate
        signals = {"round": True, "rounds": self._rounds, "upr": upr, "n_new": len(new), "smoothed_upr": self._rate,
                   "threshold": self.threshold, "smoothing": self.smoothing}
        if self._rounds >= self.min_rounds and self._rate < self.threshold:
            return GateDecision(True, f"novelty decayed: smoothed unique-passage rate {self._rate:.3f} < {self.threshold} "
                                      f"after {self._rounds} rounds", signals)
        return GateDecision(False, f"continue: smoothed unique-passage rate {self._rate:.3f} (this round {upr:.2f})",
                            signals)
