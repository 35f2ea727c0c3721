"""How far a run's grader, and any other named grader, agrees with hand labels of a stratified sample of the run's
answers (:mod:`.hand_labels`), and each run's accuracy corrected for the grader's errors.

Everything is weighted by the sampling design (:func:`~uncertainty_lab.semantic.agreement.stratum_weights`: an
answer of stratum h stands for M_h / L_h of the run's answers), so the numbers estimate the whole run, not the
over-sampled rare labels. Per grader: Cohen's κ over correct / wrong / refused with its stratified bootstrap
interval, the share of agreeing labels, n, and the **false passes**: the share of answers that are not right by
hand (wrong, or a refusal where an answer was due) that the grader passed (= 1 − Sp). Per run: the accuracy as
graded with its Wilson interval, and the Rogan–Gladen accuracy p = (p_obs + Sp − 1) / (Se + Sp − 1) with Se and Sp
of the run's grader from the hand labels — pooled over every run of the ``out_dir``, i.e. the grader is taken to err
alike on every policy's and model's answers —, its interval by the stratified bootstrap
(:func:`~uncertainty_lab.semantic.agreement.corrected_accuracy`).

A hand label is "right" when it is ``correct``, or ``refused`` on an item that asks to be declined — the run
grader's own reading of a refusal.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..semantic.agreement import CorrectedAccuracy, Interval, corrected_accuracy, kappa_interval, stratum_weights
from ..semantic.grading_audit import Agreement, agreement
from ..table import Table
from .grading import QAGrader, grade_label
from .hand_labels import AuditAnswer, Resolved, RunAnswers

__all__ = ["GRADER_NAMES", "AuditReport", "GraderAgreement", "audit_report", "hand_right"]


#: the graders :func:`_grader` builds by name (``llm`` needs a model: not here)
GRADER_NAMES = ("strict", "strict+embedding", "hassum", "contains", "normalised", "embedding")


def _grader(name: str) -> QAGrader:
    """The grader called ``name`` (:data:`GRADER_NAMES`). The one place a grader is built from its name (a registry
    lookup once graders are a plugin kind)."""
    if name not in GRADER_NAMES:
        raise ValueError(f"unknown grader {name!r}; choose from {', '.join(GRADER_NAMES)}")
    method, _, paraphrase = name.partition("+")
    return QAGrader(method=method, options={"paraphrase": paraphrase} if paraphrase else {})


def hand_right(label: str, answer: AuditAnswer) -> bool:
    """Whether a hand ``label`` makes ``answer`` right (module doc)."""
    return label == "correct" or (label == "refused" and answer.item.get("behaviour") == "decline")


def _regrade(grader: QAGrader, answer: AuditAnswer) -> dict[str, Any] | None:
    if not answer.item.get("answers"):
        return None  # no references: the run left it ungraded too
    return grader(answer.item, answer.answer, answer.raw)


@dataclass(frozen=True)
class GraderAgreement:
    """One grader against the hand labels: the weighted :class:`Agreement`, κ with its interval, and the share of
    hand-not-right answers the grader passed (``false_pass``, NaN without such answers)."""

    name: str
    agreement: Agreement
    kappa: Interval
    false_pass: float

    def row(self) -> dict[str, Any]:
        k = self.kappa
        return {"grader": self.name, "n": self.agreement.n, "agreement": round(self.agreement.accuracy, 3),
                "kappa": round(k.estimate, 3) if math.isfinite(k.estimate) else math.nan,
                f"kappa {k.level:.0%} CI": f"[{k.low:.2f}, {k.high:.2f}]" if math.isfinite(k.low) else "—",
                "hand-wrong graded correct": round(self.false_pass, 3) if math.isfinite(self.false_pass) else math.nan}


@dataclass
class AuditReport:
    """The audit of an ``out_dir``: per grader a :class:`GraderAgreement`, per run a
    :class:`~uncertainty_lab.semantic.agreement.CorrectedAccuracy` (None when Se or Sp cannot be estimated), the
    strata with their sizes and labels, and the labels left out (stale, unknown)."""

    graders: list[GraderAgreement]
    accuracy: dict[str, CorrectedAccuracy | None]
    strata: list[dict[str, Any]]
    stale: int = 0
    unknown: int = 0
    notes: list[str] = field(default_factory=list)

    def agreement_table(self) -> Table:
        rows = [g.row() for g in self.graders]
        n = self.graders[0].agreement.n if self.graders else 0
        return Table(rows, title=f"graders against {n} hand labels (weighted by stratum; κ interval: "
                                 f"{self.graders[0].kappa.method if self.graders else ''})")

    def accuracy_table(self) -> Table:
        rows = []
        for run, c in self.accuracy.items():
            if c is None:
                rows.append({"run": run, "n": "—", "accuracy [Wilson]": "—", "Se": math.nan, "Sp": math.nan,
                             "corrected [bootstrap]": "undefined"})
                continue
            k = c.corrected
            rows.append({"run": run, "n": c.n, "accuracy [Wilson]": f"{c.raw:.1%} [{c.raw_low:.1%}, {c.raw_high:.1%}]",
                         "Se": round(c.se, 3), "Sp": round(c.sp, 3),
                         "corrected [bootstrap]": f"{k.estimate:.1%} [{k.low:.1%}, {k.high:.1%}]"
                         if math.isfinite(k.estimate) else "undefined (Se + Sp ≤ 1)"})
        return Table(rows, title="accuracy as graded, and corrected for the grader's errors (Rogan–Gladen; interval: "
                                 "stratified percentile bootstrap over the hand labels and the run's answers)")

    def strata_table(self) -> Table:
        return Table(self.strata, title="strata: the run's answers and the hand labels in each")

    def text(self) -> str:
        parts = [repr(self.strata_table())]
        if self.graders:
            parts += [repr(self.agreement_table()), repr(self.accuracy_table())]
        lines = list(self.notes)
        if self.stale or self.unknown:
            lines.append(f"left out: {self.stale} stale label(s) (the run's answer changed since) and "
                         f"{self.unknown} label(s) of questions these runs do not hold")
        return "\n\n".join(parts + (["\n".join(lines)] if lines else []))

    def __str__(self) -> str:
        return self.text()

    def _repr_html_(self) -> str:
        tables = [self.strata_table()] + ([self.agreement_table(), self.accuracy_table()] if self.graders else [])
        notes = "".join(f"<p>{html.escape(n)}</p>" for n in self.notes)
        return "".join(t._repr_html_() for t in tables) + notes


def _run_accuracy(answers: RunAnswers, labelled: list[AuditAnswer], usable: Resolved, weights, strata, *,
                  level: float, n_boot: int, seed: int) -> dict[str, CorrectedAccuracy | None]:
    """Per run, the corrected accuracy with Se / Sp of the run's grader from the judged labelled answers."""
    judged = [i for i, a in enumerate(labelled) if a.graded_correct is not None]
    truth = [hand_right(usable.usable[labelled[i].key].label, labelled[i]) for i in judged]
    graded = [bool(labelled[i].graded_correct) for i in judged]
    out: dict[str, CorrectedAccuracy | None] = {}
    for name, run in answers.runs.items():
        correct = [bool(r.grade["correct"]) for r in run.records if grade_label(r.grade) is not None]
        if not correct or not truth:
            out[name] = None
            continue
        out[name] = corrected_accuracy(correct, truth, graded, [strata[i] for i in judged],
                                       weights=[weights[i] for i in judged], level=level, n_boot=n_boot, seed=seed)
    return out


def _agreement(name: str, hand: list[str], graded: list[str], right: list[bool], passed: list[bool],
               strata: list[str], weights, level: float, n_boot: int, seed: int) -> GraderAgreement:
    wrong_w = sum(w for w, r in zip(weights, right, strict=True) if not r)
    passed_w = sum(w for w, r, p in zip(weights, right, passed, strict=True) if not r and p)
    return GraderAgreement(name, agreement(hand, graded, name=name, weights=weights),
                           kappa_interval(hand, graded, strata, weights=weights, level=level, n_boot=n_boot, seed=seed),
                           passed_w / wrong_w if wrong_w else math.nan)


def audit_report(answers: RunAnswers, resolved: Resolved, graders: Sequence[str] = (), *, by: str = "label",
                 level: float = 0.95, n_boot: int = 2000, seed: int = 0) -> AuditReport:
    """The :class:`AuditReport` of ``answers`` with the usable hand labels of ``resolved``: the run's own grader
    (its stored grades) and each grader named in ``graders`` (the labelled answers regraded), stratified ``by``."""
    totals = answers.totals(by)
    labelled = [a for a in answers.answers if a.key in resolved.usable]
    counts = {h: 0 for h in totals}
    for a in labelled:
        counts[a.stratum(by)] += 1
    table = [{"stratum": h, "answers": totals[h], "labelled": counts[h]} for h in sorted(totals)]
    notes = [f"stratum {h!r} ({totals[h]} answers) has no hand label: the estimates leave it out; label some of it"
             for h in sorted(totals) if not counts[h]]
    if not labelled:
        return AuditReport([], {}, table, len(resolved.stale), len(resolved.unknown),
                           notes + ["no usable hand label yet: label some answers first"])
    strata = [a.stratum(by) for a in labelled]
    weights = stratum_weights(strata, totals, [a.size for a in labelled])
    hand = [resolved.usable[a.key].label for a in labelled]
    right = [hand_right(h, a) for h, a in zip(hand, labelled, strict=True)]
    own = _grader_name(answers.grader)
    results = [_agreement(f"{own} (the run's)", hand, [a.graded for a in labelled], right,
                          [a.graded_correct is True for a in labelled], strata, weights, level, n_boot, seed)]
    for name in graders:
        grader = _grader(name)
        grades = [_regrade(grader, a) for a in labelled]
        results.append(_agreement(name, hand, [grade_label(g) or "unjudged" for g in grades], right,
                                  [bool(g and g.get("correct")) for g in grades], strata, weights, level, n_boot, seed))
    accuracy = _run_accuracy(answers, labelled, resolved, weights, strata, level=level, n_boot=n_boot, seed=seed)
    if any(c is None or not math.isfinite(c.corrected.estimate) for c in accuracy.values()):
        notes.append("a corrected accuracy is undefined where the hand labels hold no right or no not-right judged "
                     "answer (Se or Sp unknown), or the grader is no better than chance (Se + Sp ≤ 1)")
    return AuditReport(results, accuracy, table, len(resolved.stale), len(resolved.unknown), notes)


def _grader_name(config: dict[str, Any]) -> str:
    """The run grader's name from a run header's ``grader`` (``strict``, ``strict+embedding``, …)."""
    method = config.get("method") if isinstance(config, dict) else None
    if not method:
        return "grader"
    embedding = method == "strict" and (config.get("options") or {}).get("paraphrase") == "embedding"
    return "strict+embedding" if embedding else str(method)
