"""Notebook 03's analyses beyond one sample set: how far discrete semantic entropy can reach at n samples
(against a gate's threshold), and how well each metric's confidence predicts a right answer on a question set.

- :func:`entropy_range_table` / :func:`draw_entropy_range` — every discrete semantic entropy n samples can
  show, against a raw threshold (HASSUM's τ_E = 1.65 can never fire at n = 5) and the normalised one;
- :func:`calibration_run` / :func:`auroc_table` — sample a few questions, grade one sampled answer each,
  and the AUROC of every metric's confidence for predicting a right answer, with bootstrap intervals.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..semantic import MetricResult, SampleSet, partitions_above, reachable_entropies, sample_answers
from ..table import Table
from .semantic_metrics import make_metrics, rounded

__all__ = [
    "HASSUM_TAU_D",
    "HASSUM_TAU_E",
    "NORMALISED_TAU_E",
    "CalibrationRun",
    "auroc_table",
    "calibration_run",
    "draw_entropy_range",
    "entropy_range_table",
]

#: HASSUM's reference-code thresholds (secondary): concern = SE > 1.65 nats or SD < 0.8
HASSUM_TAU_E = 1.65
HASSUM_TAU_D = 0.8
#: an entropy threshold on the normalised scale H / ln n (the orchestration lab's default)
NORMALISED_TAU_E = 0.5


# --- the reachable range of discrete semantic entropy --------------------------------------------------


def entropy_range_table(ns: Sequence[int] = (3, 5, 10), threshold: float = HASSUM_TAU_E,
                        normalised_threshold: float = NORMALISED_TAU_E) -> Table:
    """Per sample count n: ln n (the largest entropy), the number of partitions of n samples into meaning
    classes and of distinct entropy values, how many partitions a raw gate ``H > threshold`` fires on and
    the most agreeing one it fires on, and the same for the normalised gate ``H / ln n > normalised_threshold``."""
    rows = []
    for n in ns:
        if not isinstance(n, int) or isinstance(n, bool) or n < 2:
            raise ValueError(f"every n must be an integer >= 2 (one sample has no spread), got {n!r}")
        parts = reachable_entropies(n)
        raw = partitions_above(threshold, n)
        norm = [(p, h) for p, h in parts if h / math.log(n) > normalised_threshold]
        rows.append({
            "n": n, "ln n": math.log(n), "partitions": len(parts),
            "distinct values": len({round(h, 12) for _, h in parts}),
            f"fires at H > {threshold:g}": len(raw),
            "first raw firing": "+".join(map(str, raw[0][0])) if raw else "never",
            f"fires at H/ln n > {normalised_threshold:g}": len(norm),
            "first normalised firing": "+".join(map(str, norm[0][0])) if norm else "never",
        })
    return Table(rows, title="reachable discrete semantic entropy")


def draw_entropy_range(ns: Sequence[int] = (3, 5, 10), threshold: float = HASSUM_TAU_E,
                       normalised_threshold: float = NORMALISED_TAU_E, axes: Any = None) -> tuple[Any, Table]:
    """Every reachable discrete semantic entropy for each n in ``ns`` (dots; red where a gate fires) with
    ln n marked, on the raw scale with the line ``threshold`` (left) and on the normalised scale H / ln n
    with the line ``normalised_threshold`` (right). Returns ``(figure, entropy_range_table(...))``."""
    import matplotlib.pyplot as plt

    table = entropy_range_table(ns, threshold, normalised_threshold)
    if axes is None:
        fig, axes = plt.subplots(1, 2, figsize=(10, 4), constrained_layout=True)
    fig = axes[0].figure
    ax_raw, ax_norm = axes
    for x, n in enumerate(ns):
        values = np.array(sorted({round(h, 12) for _, h in reachable_entropies(n)}))
        ln_n = math.log(n)
        for ax, v, tau in ((ax_raw, values, threshold), (ax_norm, values / ln_n, normalised_threshold)):
            fires = v > tau
            ax.plot(np.full((~fires).sum(), x), v[~fires], "o", color="C0", ms=5, alpha=0.8)
            ax.plot(np.full(fires.sum(), x), v[fires], "o", color="C3", ms=5, alpha=0.8)
        ax_raw.plot([x - 0.3, x + 0.3], [ln_n, ln_n], color="k", lw=1)
        ax_raw.annotate(f"ln {n} = {ln_n:.3f}", (x, ln_n), textcoords="offset points", xytext=(0, 5),
                        ha="center", fontsize=8)
    ax_raw.axhline(threshold, color="C3", ls="--", lw=1, label=f"HASSUM τ_E = {threshold:g} nats")
    ax_norm.axhline(normalised_threshold, color="C3", ls="--", lw=1, label=f"τ = {normalised_threshold:g} on H / ln n")
    for ax, ylabel, title in ((ax_raw, "discrete semantic entropy H (nats)", "raw scale: the reach grows with n"),
                              (ax_norm, "normalised entropy H / ln n", "normalised: one threshold for every n")):
        ax.set_xticks(range(len(ns)), [f"n = {n}" for n in ns])
        ax.set_xlim(-0.6, len(ns) - 0.4)
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize="medium")
        ax.legend(loc="upper left", fontsize="small")
    ax_raw.set_ylim(-0.05, max(math.log(max(ns)), threshold) + 0.35)
    ax_norm.set_ylim(-0.05, 1.15)
    return fig, table


# --- calibration on a question set -------------------------------------------------------------------


@dataclass
class CalibrationRun:
    """Per question: the sample set, the grading of the answer that was graded (sample 0, sampled like the
    others — HASSUM §6), and every metric's result. ``correct`` is a bool array; ``confidence(label)`` a
    float array with NaN where the metric was missing."""

    items: list[Any]
    samples: list[SampleSet]
    grades: list[Any]
    results: list[dict[str, MetricResult]]
    labels: list[str]
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def correct(self) -> np.ndarray:
        """Whether each graded answer is right; an error naming the count when the grader was uncertain on some
        (an uncertain grading is neither right nor wrong: never counted as wrong)."""
        unsure = [i for i, g in enumerate(self.grades) if g.correct is None]
        if unsure:
            raise ValueError(f"{len(unsure)} of {len(self.grades)} answers were graded uncertain (e.g. question "
                             f"{self.items[unsure[0]].id!r}: {self.grades[unsure[0]].evidence}); use a grader that "
                             "decides, or drop those questions")
        return np.array([bool(g.correct) for g in self.grades], dtype=bool)

    def confidence(self, label: str) -> np.ndarray:
        if label not in self.labels:
            raise KeyError(f"no metric {label!r}; the run scored {self.labels}")
        return np.array([r[label].confidence for r in self.results], dtype=float)

    def table(self, labels: Sequence[str] | None = None) -> Table:
        """One row per question: id, the graded answer, right or wrong, and the chosen metrics' confidences."""
        labels = list(labels or self.labels)
        rows = []
        for item, s, g, r in zip(self.items, self.samples, self.grades, self.results, strict=True):
            answer = " ".join(s.texts[0].split()) if s.n else ""
            row: dict[str, Any] = {"id": item.id, "answer (sample 0)": answer[:70] + ("…" if len(answer) > 70 else ""),
                                   "gold": item.answers[0],
                                   "correct": g.label if g.correct is None else bool(g.correct)}
            row.update({label: rounded(r[label].confidence) for label in labels})
            rows.append(row)
        return Table(rows, columns=["id", "answer (sample 0)", "gold", "correct", *labels],
                     title="confidence per question")


def calibration_run(llm: Any, items: Sequence[Any], metrics: Sequence[Any] | Mapping[str, Any], *, n: int = 5,
                    temperature: float = 1.0, seed: int = 0, max_tokens: int = 32, judge: Any = "embedding",
                    grader: Any = None, system: str | None = "Answer the question in a few words.",
                    progress: bool = True) -> CalibrationRun:
    """For each question item (``.question``, ``.answers``): sample ``n`` answers, grade sample 0 against the
    gold aliases with ``grader`` (a ``graders`` plugin name, table or instance; default ``"contains"``: normalised
    containment), and score every metric on the sample set. Sample 0 is graded because it was sampled like the others; a separately
    sampled greedy answer would make the metrics partly measure the difference of format (HASSUM §6)."""
    from ..progress import bar as progress_bar
    from ..semantic.correctness import as_grader

    if n < 2:
        raise ValueError(f"n must be >= 2 samples per question (metrics need a spread), got {n!r}")
    items = list(items)
    if not items:
        raise ValueError("items is empty; pass question items, e.g. load_qa_questions('factual')[:8]")
    grader = as_grader(grader or "contains", what="grader")
    instances = make_metrics(metrics, judge=judge, llm=llm)
    samples, grades, results = [], [], []
    for k, item in enumerate(progress_bar(items, show=progress, desc="questions")):
        s = sample_answers(llm, item.question, n=n, temperature=temperature, seed=seed + k, max_tokens=max_tokens,
                           system=system)
        samples.append(s)
        grades.append(grader.grade(s.texts[0], item.answers, getattr(item, "incorrect", ()) or (), item.question))
        results.append({label: m.score(s) for label, m in instances.items()})
    settings = {"n": n, "temperature": temperature, "seed": seed, "max_tokens": max_tokens, "system": system,
                "grader": getattr(grader, "label", None) or getattr(grader, "name", type(grader).__name__),
                "backend": getattr(llm, "label", str(llm))}
    return CalibrationRun(items, samples, grades, results, list(instances), settings)


def auroc_table(run: CalibrationRun, labels: Sequence[str] | None = None, *, n_boot: int = 1000,
                level: float = 0.95, seed: int = 0) -> Table:
    """Per metric: AUROC of its confidence for predicting a right answer (= of the uncertainty for flagging a
    wrong one), with a stratified percentile bootstrap interval (``n_boot`` resamples, ``seed``), over the
    questions where the metric is not missing (``used``; ``missing`` says how many were left out). 0.5 = chance.
    Not given (NaN, and the note says why) with fewer than ``MIN_CLASS_COUNT`` right or wrong answers."""
    from ..semantic.discrimination import METHOD, MIN_CLASS_COUNT, discrimination

    rows = []
    for label in labels or run.labels:
        d = discrimination(run.confidence(label), run.correct, resamples=n_boot, level=level, seed=seed)
        row: dict[str, Any] = {"metric": label, "AUROC": math.nan, "low": math.nan, "high": math.nan, "used": d.n,
                               "right": d.n_neg, "wrong": d.n_pos, "missing": d.missing, "note": ""}
        if d.n == 0:
            reasons = {r[label].details.get("missing") for r in run.results}
            row["note"] = "missing for every question: " + "; ".join(sorted(str(x) for x in reasons))
        elif not d.given:
            row["note"] = f"not given: {d.reason}"
        else:
            row.update({"AUROC": rounded(d.value), "low": rounded(d.low), "high": rounded(d.high)})
        rows.append(row)
    return Table(rows, columns=["metric", "AUROC", "low", "high", "used", "right", "wrong", "missing", "note"],
                 title=f"AUROC for predicting a right answer ({level:.0%} {METHOD}, {n_boot} resamples, seed {seed}; "
                       f"given with at least {MIN_CLASS_COUNT} right and {MIN_CLASS_COUNT} wrong answers)")
