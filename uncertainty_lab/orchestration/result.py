"""The policy comparison's result: per (model, policy) accuracy with its Wilson interval, refusals, cost and
decisions; per model the AUROC of each first-round signal for a wrong answer (with its counts and bootstrap interval,
or the reason none is given: :mod:`..semantic.discrimination`) and paired McNemar tests between
policies; how often the gates fired per round (and, with ``calibrate``, the thresholds chosen on the dev split).

:class:`OrchestrationResult` holds the runs and builds the tables (markdown), the report (``summary.md``: its
first lines warn when a gated policy escalates almost every question, and say which grader and data were used),
the numbers (``results.json``) and the figure (:mod:`.figures`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from ..jsonsafe import jsonable
from ..lab import LabResult
from ..semantic.discrimination import MIN_CLASS_COUNT, Discrimination, discrimination
from .calibration import Calibration
from .config import OrchestrationConfig, describe_data
from .errors import OrchestrationError
from .grading import QAGrader
from .known_truth import known_truth_lines
from .record import OrchestrationRun, policy_of
from .report import calibration_lines, escalation_warnings, fire_rate_lines

__all__ = ["ExperimentResult", "OrchestrationResult"]


@dataclass
class OrchestrationResult(LabResult):
    """The runs of an experiment, keyed ``(model, policy)``, with the tables and the figure built from them."""

    report_name: ClassVar[str] = "summary"

    config: OrchestrationConfig
    runs: dict[tuple[str, str], OrchestrationRun]
    judge_cache: dict[str, float] = field(default_factory=dict)
    out_dir: Path | None = None
    files: dict[str, Path] = field(default_factory=dict)
    grader: QAGrader | None = None
    calibrations: dict[str, Calibration] = field(default_factory=dict)
    dev_runs: dict[str, OrchestrationRun] = field(default_factory=dict)

    def __post_init__(self):
        if self.grader is None:
            self.grader = QAGrader.from_setting(self.config.grading)

    @property
    def models(self) -> list[str]:
        return list(dict.fromkeys(m for m, _ in self.runs))

    @property
    def policies(self) -> list[str]:
        return list(dict.fromkeys(p for _, p in self.runs))

    # -- tables -------------------------------------------------------------------------------------
    def summary_rows(self) -> list[dict[str, Any]]:
        """One row per (model, policy): accuracy and its Wilson interval, calls, time, rounds, decisions."""
        rows = []
        for (model, policy), run in self.runs.items():
            ci = run.accuracy_ci()
            acts = run.action_counts()
            rows.append({
                "model": model, "policy": policy, "n": len(run), "correct": ci.successes,
                "refused": run.label_counts()["refused"], "uncertain": run.label_counts()["uncertain"],
                "accuracy": ci.estimate,
                "ci_low": ci.low, "ci_high": ci.high, "calls_per_question": float(run.model_calls.mean()),
                "generated_per_question": float(np.mean([t.model_calls - t.cached_calls for t in run.traces])),
                "wall_s_per_question": float(run.wall_time.mean()), "rounds_per_question": float(run.n_rounds.mean()),
                "accepted_first_round": int(sum(1 for t in run.traces if t.actions[0] == "accept")),
                "reprompts": acts.get("reprompt", 0), "reassigns": acts.get("reassign", 0),
                "delegations": acts.get("delegate", 0), "final_selects": acts.get("final_select", 0),
                "invalid_final": int(sum(1 for t in run.traces if not t.final.valid)),
            })
        return rows

    def summary_table(self) -> str:
        """The policy table (markdown). ``calls/q``: generations requested per question (the cost a policy
        incurs); ``generated/q``: those the completion cache did not already hold; ``wall s/q`` counts cached
        completions as free (see ``share_cache``)."""
        head = ["model", "policy", "n", "accuracy [95% Wilson]", "refused", "calls/q", "generated/q", "wall s/q",
                "rounds/q", "accepted r1", "reprompt/reassign/delegate", "final select", "invalid"]
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for r in self.summary_rows():
            lines.append("| " + " | ".join([
                r["model"], r["policy"], str(r["n"]),
                f"{r['accuracy']:.1%} [{r['ci_low']:.1%}, {r['ci_high']:.1%}] ({r['correct']}/{r['n'] - r['uncertain']})"
                + (f", {r['uncertain']} uncertain" if r["uncertain"] else ""),
                str(r["refused"]), f"{r['calls_per_question']:.1f}", f"{r['generated_per_question']:.1f}",
                f"{r['wall_s_per_question']:.2f}", f"{r['rounds_per_question']:.2f}",
                str(r["accepted_first_round"]), f"{r['reprompts']}/{r['reassigns']}/{r['delegations']}",
                str(r["final_selects"]), str(r["invalid_final"])]) + " |")
        return "\n".join(lines)

    def discriminations(self) -> list[tuple[str, str, Discrimination]]:
        """(model, signal, AUROC with its evidence) per model and first-round signal: how well the signal tells
        right from wrong first-round answers (= AUROC of the uncertainty for flagging a wrong one), over the
        questions with a value; plus the ``both`` policy's concern flag as a 0/1 score when a gated policy ran.
        Bootstrap seeded with the config's seed; no value below :data:`MIN_CLASS_COUNT` of either class."""
        out = []
        for model in self.models:
            runs = {p: r for (m, p), r in self.runs.items() if m == model}
            run = next(iter(runs.values()))
            labels, kept = run.decided(first=True)  # a question graded uncertain has no label: missing below
            decided = np.zeros(len(run.records), dtype=bool)
            decided[kept] = True
            correct = np.zeros(len(run.records), dtype=bool)
            correct[kept] = labels
            roles = list(run.config["coordinator"]["metrics"])
            scores = {role: run.first_signal(role) for role in roles}
            gated = [p for p in runs if policy_of(runs[p]).metrics]
            if gated:
                pol = policy_of(runs["both"] if "both" in runs else runs[gated[-1]])
                scores[f"no concern ({pol.name})"] = np.array(
                    [0.0 if pol.concerns(t.first_signals) else 1.0 for t in run.traces])
            out += [(model, name, discrimination(np.where(decided, s, np.nan), correct, seed=self.config.seed))
                    for name, s in scores.items()]
        return out

    def auroc_rows(self) -> list[dict[str, Any]]:
        """:meth:`discriminations` as rows: model, signal, ``auroc`` (NaN when not given), its interval, n,
        ``wrong`` (positives), ``right`` (negatives), missing, the bootstrap settings and the reason."""
        return [{"model": model, "signal": name, "auroc": float(d), **d.to_dict(), "wrong": d.n_pos, "right": d.n_neg}
                for model, name, d in self.discriminations()]

    def _signal_label(self, role: str) -> str:
        """A signal as the table shows it: the role with the metric that fills it (``entropy
        (discrete_semantic_entropy)``), so an overridden metric is never shown as the role's default."""
        run = next(iter(self.runs.values()), None)
        spec = (run.config["coordinator"]["metrics"].get(role) if run is not None else None)
        name = spec if isinstance(spec, str) else spec.get("name") if isinstance(spec, dict) else None
        return f"{role} ({name})" if name else role

    def auroc_table(self) -> str:
        """The AUROC table (markdown): a value with its interval, or the sentence why none is given."""
        found = self.discriminations()
        lines = ["| model | first-round signal | AUROC (wrong-answer detection) [interval] | n | wrong | right | "
                 "missing |", "|---|---|---|---|---|---|---|"]
        lines += [f"| {m} | {self._signal_label(name)} | {d.cell()} | {d.n} | {d.n_pos} | {d.n_neg} | {d.missing} |"
                  for m, name, d in found]
        how = found[0][2].interval() if found else ""
        lines += ["", "AUROC = the probability that a right first answer has the higher confidence (1 − SE, SD) than "
                  "a wrong one, ties counting ½ (0.5 = no better than chance); no concern (policy) = that policy's "
                  "round-1 verdict as a 0/1 score; n = questions with a value; wrong = first answers not right among "
                  "them (the positives), right = the rest (the negatives); missing = questions without a value or graded uncertain. "
                  f"Interval: {how} (wrong and right answers resampled separately). An AUROC is given only with at "
                  f"least {MIN_CLASS_COUNT} wrong and {MIN_CLASS_COUNT} right answers."]
        return "\n".join(lines)

    def paired(self) -> list[tuple[str, Any]]:
        """(model, PairedComparison) for every pair of policies on the same questions (McNemar), over the questions
        the grader decided on in both runs (one graded ``uncertain`` in either is left out; the policy table counts
        them)."""
        from ..semantic.evaluation import paired_comparison

        out = []
        for model in self.models:
            pols = [p for (m, p) in self.runs if m == model]
            for i, a in enumerate(pols):
                for b in pols[i + 1:]:
                    ra, rb = self.runs[(model, a)], self.runs[(model, b)]
                    if ra.ids != rb.ids:
                        raise OrchestrationError(f"runs {a!r} and {b!r} of {model} cover different questions")
                    (la, ka), (lb, kb) = ra.decided(), rb.decided()  # questions graded uncertain in either: out
                    both = np.intersect1d(ka, kb)
                    if not both.size:
                        continue
                    out.append((model, paired_comparison(lb[np.searchsorted(kb, both)], la[np.searchsorted(ka, both)],
                                                         names=(b, a))))
        return out

    def warnings(self) -> list[str]:
        """One line per gated policy that raised a concern in round 1 on ≥ 90% of the questions."""
        return escalation_warnings(self)

    def header_lines(self) -> list[str]:
        """The report's first lines: the warnings, the grader and the data."""
        n = len(next(iter(self.runs.values()))) if self.runs else 0
        dev = next(iter(self.calibrations.values()), None)
        held = f"; {len(dev.dev_ids)} more were kept out as the calibration dev split" if dev else ""
        lines = [f"**Warning.** {w}" for w in self.warnings()]
        lines += [f"Grading: **{self.grader.name}** — {self.grader.description}. Its agreement with our hand-labelled "
                  "answers: `python -m uncertainty_lab.orchestration.audit`.",
                  f"Data: {describe_data(self.config)}: {n} reported question(s){held}."]
        return lines

    def report(self) -> str:
        """The whole summary as markdown: warnings, grader and data first; the policy table, paired verdicts,
        AUROCs, gate fire rates (and calibration), cache hit rate, caveats."""
        note = ("accuracy = right final answers / n, with the 95% Wilson interval; "
                "calls/q = generations requested per question; generated/q = those not already in the completion "
                "cache; wall s/q counts cached completions as free"
                + (", and the policies share one cache (the first policy pays for the shared first round)"
                   if self.config.share_cache else "")
                + "; rounds/q = mean rounds per question; accepted r1 = questions accepted in round 1; "
                  "reprompt/reassign/delegate = remedies summed over questions; final select = questions ended by "
                  "choosing the best round's answer; invalid = final answers that failed validation; "
                  "refused = final answers that refused (counted as not correct, except on items that ask to be "
                  "declined)")
        title = f"# Uncertainty-guided orchestration (HASSUM): {', '.join(self.models)}"
        parts = [title, "", *self.header_lines(), "", "## Policies", "", self.summary_table(), "", note + ".", "",
                 "## Paired comparisons (McNemar, same questions)", ""]
        parts += [f"- {model}: {pc.verdict}" for model, pc in self.paired()] or ["- (one policy only)"]
        parts += ["", "## Wrong-answer detection from the first-round signals", "", self.auroc_table(), ""]
        parts += fire_rate_lines(self) + calibration_lines(self) + known_truth_lines(self)
        jc = self.judge_cache
        if jc:
            rate = jc.get("hit_rate", math.nan)
            parts.append(f"Pair-judgement cache: {jc.get('hits', 0)} hits, {jc.get('misses', 0)} misses "
                         f"(hit rate {'n/a' if math.isnan(rate) else f'{rate:.1%}'}).")
        parts += ["", "Caveats: a few dozen questions give wide intervals (read the verdicts, not the point "
                      "estimates); consistency is not correctness — an error shared by every sample passes every gate."]
        return "\n".join(parts)

    def figure(self):
        """Accuracy with Wilson intervals per policy (left) and model calls per question (right)."""
        from .figures import figure

        return figure(self)

    # -- files --------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The numbers as JSON values (NaN as null): config, summary rows, AUROCs, paired tests, judge cache, runs."""
        return jsonable({
            "config": self.config.to_dict(), "warnings": self.warnings(),
            "grader": {"name": self.grader.name, "description": self.grader.description, **self.grader.config()},
            "data": describe_data(self.config), "summary": self.summary_rows(), "auroc": self.auroc_rows(),
            "fire_rates": {f"{m}/{p}": r.concern_rates() for (m, p), r in self.runs.items() if policy_of(r).metrics},
            "calibration": {m: c.to_dict() for m, c in self.calibrations.items()},
            "paired": [{"model": m, "a": pc.names[0], "b": pc.names[1], "difference": pc.difference,
                        "p_value": pc.p_value, "only_a": pc.only_a, "only_b": pc.only_b, "verdict": pc.verdict}
                       for m, pc in self.paired()],
            "judge_cache": dict(self.judge_cache),
            "runs": {f"{m}/{p}": str(r.path) if r.path else None for (m, p), r in self.runs.items()},
        })

    def written(self) -> list[Path]:
        """The outputs written (summary, results, figure), the run file of every (model, policy) and the
        calibration dev runs."""
        runs = [*self.runs.values(), *self.dev_runs.values()]
        return [*self.files.values(), *(run.path for run in runs if run.path is not None)]


#: Deprecated alias of :class:`OrchestrationResult` (the old name); removed in 0.3.
ExperimentResult = OrchestrationResult
