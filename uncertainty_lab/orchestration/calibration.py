"""Gates calibrated to the sample count and the model: each threshold chosen on a dev split at a target fire rate.

A seeded share of the questions (``dev_fraction``) is kept out of the reported ones (:func:`split_dev`). Their
first-round signals — the same under every policy: same question, seed, worker and prompt — choose each gate's
threshold so that it fires on about ``target_rate`` of them (:func:`choose_threshold`):

- the entropy gate fires when H/ln n > τ_E, the density gate when D < τ_D, and a missing value always fires;
- each candidate threshold sits halfway between two neighbouring distinct dev values (or just beyond the
  extreme one), so **ties are never split**: dev questions with the same value fall on the same side;
- the candidate whose dev fire rate is nearest the target wins; of two equally near, the **lower** rate (fewer
  escalations);
- when the nearest rate is "fire on none" and no valid threshold gives it (τ_E would be 1, the largest H/ln n
  there is; τ_D would be 0), the gate is **switched off** and the report says so.

With 5 samples from a small model most first rounds have H/ln n = 1 (five different answers): the entropy gate
cannot then fire on 30% of questions — it fires on all of those or on none — and calibration says which.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from ..seeds import derive_rng
from .errors import OrchestrationError
from .policy import Policy, Signals

__all__ = ["Calibration", "CalibrationSpec", "GateCalibration", "calibrate", "choose_threshold", "gate_rates",
           "split_dev"]

RULE = ("each threshold halfway between neighbouring distinct dev values (ties never split), at the dev fire rate "
        "nearest the target; of two equally near, the lower rate; a missing value always fires")


@dataclass(frozen=True)
class CalibrationSpec:
    """The ``calibrate`` setting: the ``target_rate`` each gate should fire at on the dev questions, and the
    ``dev_fraction`` of the questions kept out of the reported ones to choose the thresholds."""

    target_rate: float = 0.3
    dev_fraction: float = 0.3

    def __post_init__(self):
        for name in ("target_rate", "dev_fraction"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0.0 < float(v) < 1.0:
                raise ValueError(f"calibrate.{name} must be a number strictly between 0 and 1, got {v!r}")

    @classmethod
    def from_setting(cls, value: Any) -> CalibrationSpec:
        """From the config's table (``{target_rate = 0.3, dev_fraction = 0.3}``) or a spec."""
        if isinstance(value, CalibrationSpec):
            return value
        if not isinstance(value, Mapping):
            raise ValueError(f"calibrate must be a table such as {{target_rate = 0.3, dev_fraction = 0.3}}, got {value!r}")
        names = [f.name for f in fields(cls)]
        for key in value:
            if key not in names:
                close = difflib.get_close_matches(str(key), names, n=1)
                raise ValueError(f"unknown calibrate setting {key!r}" + (f" (did you mean {close[0]!r}?)" if close else "")
                                 + f"; the settings are {names}")
        return cls(**dict(value))


def split_dev(items: Sequence[Any], spec: CalibrationSpec, seed: int) -> tuple[list[Any], list[Any]]:
    """(dev, reported): round(dev_fraction · n) questions drawn with ``seed`` (at least one, and at least one left
    to report), each part in the items' order."""
    n = len(items)
    if n < 2:
        raise OrchestrationError(f"calibrate needs at least 2 questions (a dev share and a reported share), got {n}")
    k = min(max(1, round(spec.dev_fraction * n)), n - 1)
    chosen = set(derive_rng(seed, "orchestration.calibrate.dev").choice(n, size=k, replace=False).tolist())
    return [it for i, it in enumerate(items) if i in chosen], [it for i, it in enumerate(items) if i not in chosen]


def _fires(gate: str, value: float, threshold: float) -> bool:
    if math.isnan(value):
        return True
    return value > threshold if gate == "entropy" else value < threshold


def _candidates(gate: str, values: list[float]) -> list[float | None]:
    """Every threshold that puts the cut between two neighbouring distinct values, or beyond the extremes;
    None where the cut "fire on none" has no valid threshold."""
    u = sorted(set(values))
    mids = [(a + b) / 2 for a, b in zip(u, u[1:], strict=False)]
    if gate == "entropy":  # fires when v > τ, τ in [0, 1)
        low = [u[0] / 2] if u[0] > 0 else []
        return [*low, *mids, u[-1] if u[-1] < 1.0 else None]
    high = [(u[-1] + 1.0) / 2] if u[-1] < 1.0 else []  # density fires when v < τ, τ in (0, 1]
    return [u[0] if u[0] > 0 else None, *mids, *high]


@dataclass(frozen=True)
class GateCalibration:
    """One gate's calibration: the ``threshold`` chosen (None: switched off), its fire rate on the dev
    questions (``dev_rate``, missing values included), ``n`` dev values of which ``missing``, the
    ``target_rate``, and a ``note`` (why a gate is off, or how far the target was out of reach)."""

    gate: str
    threshold: float | None
    dev_rate: float
    n: int
    missing: int
    target_rate: float
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def choose_threshold(values: Sequence[float], gate: str, target_rate: float) -> GateCalibration:
    """The threshold of ``gate`` (``entropy`` on H/ln n or ``density``) whose fire rate on ``values`` is nearest
    ``target_rate`` (the module doc has the rule, ties included)."""
    if gate not in ("entropy", "density"):
        raise ValueError(f"gate must be 'entropy' or 'density', got {gate!r}")
    vals = [float(v) for v in values]
    finite = [v for v in vals if not math.isnan(v)]
    n, missing = len(vals), len(vals) - len(finite)
    if not finite:
        raise OrchestrationError(f"no dev question has a {gate} value (all {n} missing): nothing to calibrate on")
    best: tuple[float, float, float | None] | None = None
    for tau in _candidates(gate, finite):
        fired = missing if tau is None else sum(_fires(gate, v, tau) for v in vals)
        rate = fired / n
        key = (abs(rate - target_rate), rate, tau)
        if best is None or key[:2] < best[:2]:
            best = key
    assert best is not None
    _, rate, tau = best
    note = ""
    if tau is None:
        top = "1 (every sample its own meaning)" if gate == "entropy" else "0"
        note = (f"switched off: the nearest rate to {target_rate:.0%} is to fire on none, which needs a threshold "
                f"of {top}; {sum(v == max(finite) if gate == 'entropy' else v == min(finite) for v in finite)} of "
                f"{n} dev questions tie at the extreme value")
    elif abs(rate - target_rate) > 0.1:
        note = f"the target {target_rate:.0%} is out of reach: ties in the dev values allow {rate:.0%} at best"
    return GateCalibration(gate, tau, rate, n, missing, float(target_rate), note)


def gate_rates(signals: Sequence[Signals], policy: Policy) -> dict[str, float]:
    """The share of ``signals`` on which each of ``policy``'s gates fires, and ``any`` of them (NaN when the
    policy has no gate)."""
    n = len(signals)
    out: dict[str, float] = {}
    thresholds = {"entropy": policy.entropy_threshold, "density": policy.density_threshold}
    for gate in policy.metrics:
        out[gate] = sum(_fires(gate, s.value(gate), thresholds[gate]) for s in signals) / n if n else math.nan
    hit = [any(_fires(g, s.value(g), thresholds[g]) for g in policy.metrics) for s in signals]
    out["any"] = sum(hit) / n if n and policy.metrics else math.nan
    return out


@dataclass
class Calibration:
    """A model's calibration: the ``spec``, the ``dev_ids``, and each gate's :class:`GateCalibration`;
    ``union_rate``: how often either gate fires on the dev questions (what ``both`` does)."""

    spec: CalibrationSpec
    dev_ids: list[str]
    gates: dict[str, GateCalibration] = field(default_factory=dict)
    union_rate: float = math.nan

    def apply(self, policy: Policy) -> Policy:
        """``policy`` with the calibrated thresholds; a gate switched off leaves its ``metrics``."""
        if not policy.metrics:
            return policy
        changes: dict[str, Any] = {}
        kept = [g for g in policy.metrics if self.gates[g].threshold is not None]
        for gate in kept:
            changes[f"{gate}_threshold"] = self.gates[gate].threshold
        return policy.replace(metrics=tuple(kept), **changes)

    def to_dict(self) -> dict[str, Any]:
        return {"target_rate": self.spec.target_rate, "dev_fraction": self.spec.dev_fraction, "rule": RULE,
                "dev_ids": list(self.dev_ids), "gates": {g: c.to_dict() for g, c in self.gates.items()},
                "union_rate": self.union_rate}


def calibrate(signals: Sequence[Signals], dev_ids: Sequence[str], spec: CalibrationSpec) -> Calibration:
    """Both gates' thresholds from the dev questions' first-round ``signals``."""
    gates = {g: choose_threshold([s.value(g) for s in signals], g, spec.target_rate) for g in ("entropy", "density")}
    out = Calibration(spec, list(dev_ids), gates)
    both = out.apply(Policy(name="calibrated", metrics=("entropy", "density")))
    out.union_rate = gate_rates(signals, both)["any"] if both.metrics else 0.0
    return out
