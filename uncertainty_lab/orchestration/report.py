"""The gate sections of the experiment report: a warning for every gated policy that escalates (almost) every
question, how often each policy's gates fired per round, and the calibrated thresholds next to the preset ones.

Each function takes an :class:`~.result.OrchestrationResult` and returns markdown lines.
"""

from __future__ import annotations

import math
from typing import Any

from .calibration import RULE, gate_rates
from .policy import Policy
from .record import OrchestrationRun, policy_of

__all__ = ["ESCALATION_WARNING", "calibration_lines", "escalation_warnings", "fire_rate_lines"]

#: A gated policy that raises a concern in round 1 on at least this share of the questions is warned about.
ESCALATION_WARNING = 0.9
PRESET = Policy(name="preset")
GATE_TEXT = {"entropy": "entropy (fires when H/ln n > τ_E)", "density": "density (fires when D < τ_D)"}


def _first_concerned(run: OrchestrationRun) -> int:
    return sum(bool(t.rounds[0].decision.concerns) for t in run.traces)


def escalation_warnings(result: Any) -> list[str]:
    """One sentence per gated (model, policy) whose round-1 decision raised a concern on ≥ 90% of the questions,
    with its cost against ``none`` and what to do."""
    out = []
    for (model, name), run in result.runs.items():
        policy = policy_of(run)
        if not policy.metrics or not len(run):
            continue
        k, n = _first_concerned(run), len(run)
        if k / n < ESCALATION_WARNING:
            continue
        base = result.runs.get((model, "none"))
        cost = ""
        if base is not None and base.model_calls.mean() > 0:
            cost = f", at {run.model_calls.mean() / base.model_calls.mean():.1f}× the model calls of 'none'"
        fix = ("even with calibrated thresholds: the dev questions may not resemble the reported ones (a larger "
               "dev_fraction helps), or gated values are missing or answers invalid (the traces say which)"
               if result.calibrations else
               "its thresholds do not fit this model and sample count — calibrate them on a dev split: "
               "calibrate = {target_rate = 0.3, dev_fraction = 0.3}")
        out.append(f"policy '{name}' ({model}) raised a concern in round 1 on {k} of {n} questions ({k / n:.0%}): it "
                   f"escalates (almost) every question{cost}, so its gate does not tell sure answers from unsure "
                   f"ones here; {fix}.")
    return out


def _cell(k: int, n: int) -> str:
    return f"{k}/{n} ({k / n:.0%})" if n else "—"


def _thresholds(policy: Policy) -> str:
    parts = []
    if "entropy" in policy.metrics:
        parts.append(f"τ_E = {policy.entropy_threshold:.3g}")
    if "density" in policy.metrics:
        parts.append(f"τ_D = {policy.density_threshold:.3g}")
    return ", ".join(parts) or "no gate left"


def fire_rate_lines(result: Any) -> list[str]:
    """The table of how often each gated policy raised a concern, per round, on the reported questions (and on
    the dev questions' single round when calibrated)."""
    gated = [(key, run) for key, run in result.runs.items() if policy_of(run).metrics
             or (result.calibrations and key[1] != "none")]
    if not gated:
        return []
    rounds = max(len(run.concern_rates()) for _, run in gated)
    dev = bool(result.dev_runs)
    head = ["model", "policy", "thresholds", *(["dev round 1"] if dev else []),
            *(f"round {r}" for r in range(1, rounds + 1))]
    lines = ["## How often the gates fired", "",
             "Concerns raised per round (a gate fired, a gated value was missing, or the answer was invalid), over the "
             "questions that reached that round" + ("; dev: the calibration questions, asked once" if dev else "")
             + ".", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for (model, name), run in gated:
        policy = policy_of(run)
        cells = [model, name, _thresholds(policy)]
        if dev:
            d = result.dev_runs.get(model)
            k = 0 if d is None or not policy.metrics else round(
                gate_rates([t.first_signals for t in d.traces], policy)["any"] * len(d))
            cells.append(_cell(k, len(d)) if d is not None else "—")
        rates = run.concern_rates()
        cells += [_cell(r["concerned"], r["asked"]) for r in rates] + ["—"] * (rounds - len(rates))
        lines.append("| " + " | ".join(cells) + " |")
    return [*lines, ""]


def calibration_lines(result: Any) -> list[str]:
    """The calibrated thresholds per model and gate beside the preset ones, with both fire rates on the dev
    questions and the rule that chose them."""
    if not result.calibrations:
        return []
    lines = ["## Calibrated gates", ""]
    for model, cal in result.calibrations.items():
        dev = result.dev_runs[model]
        signals = [t.first_signals for t in dev.traces]
        lines += [f"{model}: {len(cal.dev_ids)} dev questions (seed {result.config.seed}, dev_fraction "
                  f"{cal.spec.dev_fraction}), kept out of every table above; target fire rate "
                  f"{cal.spec.target_rate:.0%}. Rule: {RULE}.", "",
                  "| gate | preset threshold | its dev fire rate | calibrated threshold | its dev fire rate | note |",
                  "|---|---|---|---|---|---|"]
        preset = gate_rates(signals, PRESET)
        for gate, g in cal.gates.items():
            tau = "off" if g.threshold is None else f"{g.threshold:.3g}"
            pre = getattr(PRESET, f"{gate}_threshold")
            lines.append(f"| {GATE_TEXT[gate]} | {pre:g} | {preset[gate]:.0%} | {tau} | {g.dev_rate:.0%} | "
                         f"{g.note or '—'} |")
        union = "—" if math.isnan(cal.union_rate) else f"{cal.union_rate:.0%}"
        lines += [f"| either gate (policy 'both') | | {preset['any']:.0%} | | {union} | |", ""]
    lines += ["Its dev fire rate: the share of dev questions on which that gate alone raises a concern in round 1 at "
              "that threshold; either gate: the share on which at least one of the two does (the 'both' policy).", ""]
    return lines
