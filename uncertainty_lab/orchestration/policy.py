"""Orchestration policies: data (:class:`Policy`) plus one small pure decision function (:meth:`Policy.decide`).

HASSUM's reference code leaves the decision rules to the CEO's prompt; here they are code, so tests can
drive them with hand-made :class:`Signals`:

1. no concern → **accept** the round's answer;
2. at the round cap → **final_select**: the best answer already produced (:func:`best_round`);
3. otherwise climb the escalation ladder, one rung per concerned round:
   **reprompt** (``max_reprompts`` times; explicit acceptance criteria and a changed angle) →
   **reassign** to another worker → **delegate** to several workers and pick by confidence →
   when the ladder is used up, **final_select** early rather than chase the metric (HASSUM §6).
   Disabled actions, and actions that need more workers than there are, are skipped.

A *concern* is raised by a gated metric past its threshold, by a gated metric that is **missing** (never
silently confident), and — with ``verify_answer`` — by a primary answer that failed validation.

Thresholds: ``entropy_threshold`` is on the normalised scale H / ln n ∈ [0, 1] (the entropy metric's
``normalised_uncertainty``), so it means the same for any sample count; concern when H/ln n > τ_E.
``density_threshold`` is on the density's own [0, 1] scale; concern when D < τ_D. Unreachable settings are
refused at construction (a raw τ_E = 1.65 can never fire with 5 samples: ln 5 = 1.609).

Presets: ``none`` (plain hierarchy: accept the first answer), ``entropy_only``, ``density_only``, ``both``;
:func:`get_policy` takes a preset name, a dict (a preset via ``"preset"`` plus overrides, or every field)
or a :class:`Policy`.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..untrusted import excerpt, listing

__all__ = ["ACTIONS", "GATES", "PRESETS", "Decision", "Policy", "Signals", "best_round", "get_policy",
           "selection_key"]

ACTIONS = ("accept", "reprompt", "reassign", "delegate", "final_select")
GATES = ("entropy", "density")
REMEDIES = ("reprompt", "reassign", "delegate")
MAX_ROUNDS_LIMIT = 20

NAN = math.nan


def _num(x: Any) -> float:
    """A float, with None (how NaN is written to JSON) read as NaN."""
    return NAN if x is None else float(x)


def _jsonable(x: float) -> float | None:
    return None if isinstance(x, float) and math.isnan(x) else x


@dataclass(frozen=True)
class Signals:
    """What one worker answer looked like to the coordinator.

    ``entropy``: normalised semantic entropy H / ln n ∈ [0, 1] (NaN = missing); ``entropy_raw``: H in nats;
    ``density``: semantic density ∈ [0, 1] (NaN = missing); ``n_samples``: answers scored;
    ``answer_valid``: the primary answer passed validation; ``missing``: {gate: why it is missing};
    ``problem``: why the answer is invalid; ``extra``: other metrics' confidences (logged, never gated).
    """

    entropy: float = NAN
    density: float = NAN
    entropy_raw: float = NAN
    n_samples: int = 0
    answer_valid: bool = True
    missing: Mapping[str, str] = field(default_factory=dict)
    problem: str | None = None
    extra: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self):
        for name in ("entropy", "density", "entropy_raw"):
            object.__setattr__(self, name, _num(getattr(self, name)))
        object.__setattr__(self, "missing", dict(self.missing))
        object.__setattr__(self, "extra", {k: _num(v) for k, v in self.extra.items()})

    def value(self, gate: str) -> float:
        if gate not in GATES:
            raise ValueError(f"gate must be one of {GATES}, got {gate!r}")
        return getattr(self, gate)

    def to_dict(self) -> dict[str, Any]:
        return {"entropy": _jsonable(self.entropy), "density": _jsonable(self.density),
                "entropy_raw": _jsonable(self.entropy_raw), "n_samples": self.n_samples,
                "answer_valid": self.answer_valid, "missing": dict(self.missing), "problem": self.problem,
                "extra": {k: _jsonable(v) for k, v in self.extra.items()}}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Signals:
        return cls(**{k: d[k] for k in (f.name for f in dataclasses.fields(cls)) if k in d})


@dataclass(frozen=True)
class Decision:
    """A policy's decision after one round: ``action`` (one of :data:`ACTIONS`), a plain-language ``reason``,
    the ``signals`` that caused it, the ``concerns`` raised, the ``round`` and the escalation ``rung``
    (how many concerned rounds came before)."""

    action: str
    reason: str
    signals: Signals | None = None
    concerns: tuple[str, ...] = ()
    round: int = 0
    rung: int = 0

    def __post_init__(self):
        if self.action not in ACTIONS:
            raise ValueError(f"action must be one of {ACTIONS}, got {self.action!r}")
        object.__setattr__(self, "concerns", tuple(self.concerns))

    @property
    def concerned(self) -> bool:
        return bool(self.concerns)

    def to_dict(self) -> dict[str, Any]:
        return {"action": self.action, "reason": self.reason, "concerns": list(self.concerns), "round": self.round,
                "rung": self.rung, "signals": None if self.signals is None else self.signals.to_dict()}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Decision:
        s = d.get("signals")
        return cls(d["action"], d["reason"], None if s is None else Signals.from_dict(s), tuple(d.get("concerns", ())),
                   d.get("round", 0), d.get("rung", 0))


def _fmt(x: float) -> str:
    return f"{x:.3g}"


@dataclass(frozen=True)
class Policy:
    """An orchestration policy (see the module doc). ``metrics``: the gates it reads (a subset of
    :data:`GATES`); ``entropy_threshold`` on the H / ln n scale; ``density_threshold`` on [0, 1];
    ``max_rounds``: the cap (round 1 included); ``max_reprompts``: re-prompt rungs before reassigning;
    ``reprompt`` / ``reassign`` / ``delegate``: which actions are enabled; ``delegate_k``: workers asked
    in a delegation round; ``verify_answer``: an invalid primary answer is a concern."""

    name: str = "custom"
    metrics: tuple[str, ...] = ("entropy", "density")
    entropy_threshold: float = 0.5
    density_threshold: float = 0.8
    max_rounds: int = 4
    max_reprompts: int = 1
    reprompt: bool = True
    reassign: bool = True
    delegate: bool = True
    delegate_k: int = 2
    verify_answer: bool = True

    def __post_init__(self):
        if isinstance(self.metrics, str):
            object.__setattr__(self, "metrics", (self.metrics,))
        if not isinstance(self.metrics, (list, tuple)):
            raise ValueError(f"policy {excerpt(str(self.name))}: metrics must be a list of gates from {GATES} (or [] "
                             f"for none), got {type(self.metrics).__name__} {excerpt(repr(self.metrics))}; e.g. "
                             "metrics = [\"entropy\"]")
        object.__setattr__(self, "metrics", tuple(self.metrics))
        bad = [m for m in self.metrics if m not in GATES]
        if bad:
            raise ValueError(f"metrics holds {listing(bad)}; a policy gates on {GATES} (other metrics are logged by the "
                             "coordinator's metrics config, not gated)")
        if len(set(self.metrics)) != len(self.metrics):
            raise ValueError(f"metrics lists a gate twice: {self.metrics}")
        tau_e = float(self.entropy_threshold)
        if not math.isfinite(tau_e) or tau_e < 0:
            raise ValueError(f"entropy_threshold must be in [0, 1) on the normalised scale H/ln n, got {tau_e!r}")
        if tau_e >= 1.0:
            raise ValueError(
                f"entropy_threshold={tau_e!r} can never fire: it is on the normalised scale H/ln n, whose maximum is 1 "
                "(every sample its own meaning class). A raw threshold in nats must be below ln n — HASSUM's 1.65 "
                "exceeds ln 5 = 1.609, so with 5 samples that gate never fires. Give a value in [0, 1), e.g. 0.5, or "
                "convert a raw one with Policy.from_raw_entropy_threshold(tau, n_samples)")
        tau_d = float(self.density_threshold)
        if not math.isfinite(tau_d) or tau_d <= 0.0 or tau_d > 1.0:
            why = "never fires (density is never below 0)" if tau_d <= 0 else "always fires (density is at most 1)"
            raise ValueError(f"density_threshold must be in (0, 1] (concern when density < threshold); "
                             f"{tau_d!r} {why}")
        object.__setattr__(self, "entropy_threshold", tau_e)
        object.__setattr__(self, "density_threshold", tau_d)
        for name, lo in (("max_rounds", 1), ("max_reprompts", 0), ("delegate_k", 2)):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < lo:
                raise ValueError(f"{name} must be an integer >= {lo}, got {v!r}")
        if self.max_rounds > MAX_ROUNDS_LIMIT:
            raise ValueError(f"max_rounds={self.max_rounds} is above the cap of {MAX_ROUNDS_LIMIT}; chasing the metric "
                             "for many rounds can hurt (HASSUM §6) — prefer the best-round choice")

    # -- construction helpers -------------------------------------------------------------------------
    @classmethod
    def from_raw_entropy_threshold(cls, tau: float, n_samples: int, **fields: Any) -> Policy:
        """A policy from a threshold in nats for ``n_samples`` samples: τ / ln n on the normalised scale.
        Refuses τ ≥ ln n, which can never fire (HASSUM's 1.65 with 5 samples)."""
        if not isinstance(n_samples, int) or n_samples < 2:
            raise ValueError(f"n_samples must be an integer >= 2 (entropy of one sample is always 0), got {n_samples!r}")
        ln_n = math.log(n_samples)
        if not math.isfinite(float(tau)) or tau < 0:
            raise ValueError(f"tau must be a non-negative entropy in nats, got {tau!r}")
        if tau >= ln_n:
            raise ValueError(
                f"raw entropy threshold {tau} can never fire with {n_samples} samples: the largest entropy they can "
                f"show is ln {n_samples} = {ln_n:.3f}. State the threshold on the normalised scale H/ln n "
                f"(entropy_threshold in [0, 1)) or lower it below {ln_n:.3f}")
        return cls(entropy_threshold=tau / ln_n, **fields)

    def replace(self, **changes: Any) -> Policy:
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["metrics"] = list(self.metrics)
        return d

    # -- the decision function -----------------------------------------------------------------------
    def concerns(self, signals: Signals) -> list[str]:
        """The concerns ``signals`` raise under this policy (empty: nothing to worry about)."""
        out = []
        if self.verify_answer and not signals.answer_valid:
            out.append(f"invalid answer: {signals.problem or 'failed validation'}")
        for gate in self.metrics:
            v = signals.value(gate)
            if math.isnan(v):
                out.append(f"{gate} missing: {signals.missing.get(gate, 'not computed')}")
            elif gate == "entropy" and v > self.entropy_threshold:
                out.append(f"entropy {_fmt(v)} > {_fmt(self.entropy_threshold)} (H/ln n: the samples disagree)")
            elif gate == "density" and v < self.density_threshold:
                out.append(f"density {_fmt(v)} < {_fmt(self.density_threshold)} (the samples are spread out)")
        return out

    def ladder(self, n_workers: int | None = None) -> list[str]:
        """The escalation rungs in order, after skipping disabled actions and those that need more workers."""
        many = n_workers is None or n_workers >= 2
        rungs = ["reprompt"] * (self.max_reprompts if self.reprompt else 0)
        if self.reassign and many:
            rungs.append("reassign")
        if self.delegate and many:
            rungs.append("delegate")
        return rungs

    def decide(self, signals: Signals, round: int, history: Sequence[Decision] = (), *,
               n_workers: int | None = None) -> Decision:
        """The decision after round ``round`` (1-based) produced ``signals``; ``history`` holds the earlier
        rounds' decisions; ``n_workers`` (None = enough) rules out reassign/delegate with one worker."""
        if not isinstance(signals, Signals):
            raise TypeError(f"signals must be a Signals, got {type(signals).__name__}")
        if not isinstance(round, int) or round < 1:
            raise ValueError(f"round must be a positive integer (1 = the first answer), got {round!r}")
        concerns = tuple(self.concerns(signals))
        rung = sum(1 for d in history if d.action in REMEDIES)

        def decision(action: str, reason: str) -> Decision:
            return Decision(action, reason, signals, concerns, round, rung)

        if not concerns:
            if not self.metrics and not self.verify_answer:
                return decision("accept", f"policy {self.name!r} has no gate: the plain hierarchy accepts the answer")
            gates = ", ".join(self.metrics) or "answer validation"
            return decision("accept", f"no concern ({gates} within thresholds)")
        what = "; ".join(concerns)
        if round >= self.max_rounds:
            return decision("final_select", f"round cap {self.max_rounds} reached with concern ({what}): choose the "
                                            "best answer already produced")
        rungs = self.ladder(n_workers)
        if rung >= len(rungs):
            used = ", ".join(rungs) or "no remedy enabled"
            return decision("final_select", f"concern ({what}) and the escalation ladder is used up ({used}): choose "
                                            "the best answer already produced rather than chase the metric")
        action = rungs[rung]
        ordinal = "first" if rung == 0 else ("repeated" if history and history[-1].action == action else "persisting")
        why = {"reprompt": "re-prompt with explicit acceptance criteria and a changed angle",
               "reassign": "reassign the task to another worker",
               "delegate": f"delegate to {self.delegate_k} workers and pick the most confident answer"}[action]
        failed = f" (the {history[-1].action} did not clear it)" if history and history[-1].action in REMEDIES else ""
        return decision(action, f"{ordinal} concern ({what}){failed}: {why}")


def selection_key(signals: Signals, policy: Policy | None = None) -> tuple:
    """The best-round key, smaller is better: (invalid answer, concern, −density, entropy), with a missing
    value ranking last — the reference code's argmin(concern, −SD, SE) behind answer validity."""
    concern = bool(policy.concerns(signals)) if policy is not None else False
    d = signals.density
    e = signals.entropy
    return (not signals.answer_valid, concern, math.inf if math.isnan(d) else -d, math.inf if math.isnan(e) else e)


def best_round(candidates: Sequence[Signals], policy: Policy | None = None) -> int:
    """The index of the best candidate by :func:`selection_key`; ties go to the earliest (the first answer is
    not displaced by an equally good later one)."""
    if not candidates:
        raise ValueError("candidates is empty: there is no answer to select from")
    keys = [selection_key(s, policy) for s in candidates]
    return min(range(len(keys)), key=lambda i: (keys[i], i))


_BASE = {"metrics": (), "max_rounds": 1, "reprompt": False, "reassign": False, "delegate": False, "verify_answer": False}
PRESETS: dict[str, dict[str, Any]] = {
    "none": dict(_BASE),
    "entropy_only": {"metrics": ("entropy",)},
    "density_only": {"metrics": ("density",)},
    "both": {"metrics": ("entropy", "density")},
}


def get_policy(spec: Any = "both", **overrides: Any) -> Policy:
    """A :class:`Policy` from a preset name (with ``overrides``), a dict (``{"preset": "both",
    "entropy_threshold": 0.6}``, or all fields with a ``name``) or a Policy (``overrides`` replace fields)."""
    if isinstance(spec, Policy):
        return spec.replace(**overrides) if overrides else spec
    if isinstance(spec, Mapping):
        d = dict(spec)
        preset = d.pop("preset", None)
        if preset is None and d.get("name") in PRESETS:
            preset = d["name"]
        if preset is not None:
            d.setdefault("name", preset)
            return get_policy(preset, **{**d, **overrides})
        fields = {f.name for f in dataclasses.fields(Policy)}
        unknown = sorted(set(d) - fields)
        if unknown:
            raise ValueError(f"unknown policy field(s) {listing(unknown)}; the fields are {sorted(fields)} (or 'preset')")
        return Policy(**{**d, **overrides})
    if isinstance(spec, str):
        if spec not in PRESETS:
            close = difflib.get_close_matches(spec, list(PRESETS), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ValueError(f"unknown policy {spec!r}; presets are {list(PRESETS)} (or pass a dict / Policy){hint}")
        fields = {f.name for f in dataclasses.fields(Policy)}
        unknown = sorted(set(overrides) - fields)
        if unknown:
            raise ValueError(f"unknown policy field(s) {listing(unknown)}; the fields are {sorted(fields)}")
        return Policy(**{"name": spec, **PRESETS[spec], **overrides})
    raise TypeError(f"policy must be a preset name, a dict or a Policy, got {type(spec).__name__}")
