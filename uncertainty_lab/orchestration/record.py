"""The run record of one (model, policy) unit: :class:`OrchestrationRun`, its questions as
:class:`QuestionRecord` s, and the run file's :data:`FORMAT`.

A run file is a journal (:mod:`uncertainty_lab.journal`): a header whose ``config`` holds the coordinator's
configuration and the item ids, and whose ``depends`` holds what the grades depend on (the grader's settings, the
data file's and each item's content hashes: :mod:`.freshness`); one ``question`` record per question (its item and
the item's hashes, trace and grades); an ``end`` record when every question is done. (Files written before 0.2.1
hold the grader in ``config`` and no hashes; they resume and are checked all the same.) :meth:`OrchestrationRun.load` reads a finished or interrupted one
(files written before the lab took this shape load too: the format is unchanged).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..journal import JournalFormat
from ..jsonsafe import jsonable
from .errors import OrchestrationError, OrchestrationResumeError
from .grading import grade_label
from .policy import Policy, get_policy
from .trace import Trace

__all__ = ["FORMAT", "BenchmarkRun", "OrchestrationRun", "QuestionRecord", "gate_of", "policy_of"]

FORMAT = JournalFormat("uncertainty_lab.orchestration.benchmark/1", body=("question",), end="end",
                       error=OrchestrationError, resume_error=OrchestrationResumeError, what="orchestration run")


@dataclass
class QuestionRecord:
    """One question of a benchmark run: its ``item``, the ``trace``, the ``grade`` of the final answer and
    ``first_grade`` of the first-round answer (``{"correct", "method", "evidence"}``, None when ungraded)."""

    index: int
    id: str
    item: dict[str, Any]
    trace: Trace
    grade: dict[str, Any] | None = None
    first_grade: dict[str, Any] | None = None

    @property
    def correct(self) -> bool | None:
        return None if self.grade is None else self.grade.get("correct")

    def to_dict(self) -> dict[str, Any]:
        return {"type": "question", "index": self.index, "id": self.id, "item": self.item,
                "trace": jsonable(self.trace.to_dict()), "grade": self.grade, "first_grade": self.first_grade}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> QuestionRecord:
        return cls(d["index"], d["id"], dict(d["item"]), Trace.from_dict(d["trace"]), d.get("grade"), d.get("first_grade"))


@dataclass
class OrchestrationRun:
    """A benchmark run's ``config`` (the run file's header), its ``records`` in item order, whether it is
    ``complete``, the ``path`` it streams to, and the settings of the ``grader`` that graded it (the header's
    ``depends``; older files kept it in the config). :meth:`load` reloads a file (complete or interrupted)."""

    config: dict[str, Any]
    records: list[QuestionRecord]
    complete: bool = True
    path: Path | None = None
    grader: Any = None

    @classmethod
    def load(cls, path: str | os.PathLike) -> OrchestrationRun:
        journal = FORMAT.load(path)
        order = {key: i for i, key in enumerate(journal.config.get("items", []))}
        records = sorted((QuestionRecord.from_dict(r) for r in journal.body), key=lambda r: order.get(r.id, len(order)))
        done = journal.end is not None and len(records) == len(journal.config.get("items", []))
        grader = (journal.header.get("depends") or {}).get("grader", journal.config.get("grader"))
        return cls(journal.config, records, done, journal.path, grader)

    @classmethod
    def joined(cls, runs: list[OrchestrationRun], path: str | os.PathLike | None = None) -> OrchestrationRun:
        """One run of the runs of consecutive chunks of a question list (in order): the first chunk's config with
        every chunk's items, the records one after another, complete when every chunk is; ``path`` the folder
        of the chunk files (None: a single run comes back as it is)."""
        if len(runs) == 1 and path is None:
            return runs[0]
        config = dict(runs[0].config, items=[i for r in runs for i in r.config.get("items", [])])
        return cls(config, [rec for r in runs for rec in r.records], all(r.complete for r in runs),
                   None if path is None else Path(path), runs[0].grader)

    def __len__(self) -> int:
        return len(self.records)

    def __repr__(self) -> str:
        state = "complete" if self.complete else "interrupted"
        return f"{type(self).__name__}(policy={self.policy!r}, {len(self)} question(s), {state})"

    @property
    def policy(self) -> str:
        return self.config.get("coordinator", {}).get("policy", {}).get("name", "?")

    @property
    def ids(self) -> list[str]:
        return [r.id for r in self.records]

    @property
    def traces(self) -> list[Trace]:
        return [r.trace for r in self.records]

    def _labels(self, key: str) -> np.ndarray:
        grades = [getattr(r, key) for r in self.records]
        bad = [r.id for r, g in zip(self.records, grades, strict=True)
               if g is None or (g.get("correct") is None and g.get("label") != "uncertain")]
        if bad:
            raise OrchestrationError(f"{len(bad)} question(s) are ungraded (e.g. {bad[0]!r}); grade them or drop them")
        return np.array([bool(g["correct"]) for g in grades], dtype=bool)  # uncertain (None): not counted correct

    def decided(self, first: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """(labels, kept): whether each final (``first``: first-round) answer the grader decided on is right, and
        the indices of those questions; the ones graded ``uncertain`` are left out (:meth:`label_counts` counts
        them). Raises when a question is ungraded."""
        grades = [r.first_grade if first else r.grade for r in self.records]
        bad = [r.id for r, g in zip(self.records, grades, strict=True) if grade_label(g) is None]
        if bad:
            raise OrchestrationError(f"{len(bad)} question(s) are ungraded (e.g. {bad[0]!r}); grade them or drop them")
        kept = np.array([i for i, g in enumerate(grades) if grade_label(g) != "uncertain"], dtype=int)
        return np.array([bool(grades[i]["correct"]) for i in kept], dtype=bool), kept

    @property
    def correct(self) -> np.ndarray:
        """Whether each final answer is correct (raises when some are ungraded); an answer graded ``uncertain`` is
        not counted correct here — accuracies and AUROCs use :meth:`decided`, which leaves those out and counts them."""
        return self._labels("grade")

    @property
    def first_correct(self) -> np.ndarray:
        """Whether each first-round answer is correct (the labels for AUROC of first-round signals)."""
        return self._labels("first_grade")

    @property
    def labels(self) -> list[str | None]:
        """Each final answer's label: ``correct``, ``wrong``, ``refused``, ``uncertain`` (None: ungraded)."""
        return [grade_label(r.grade) for r in self.records]

    def label_counts(self, first: bool = False) -> dict[str, int]:
        """How many final (``first``: first-round) answers have each label (``uncertain``: the grader could not
        decide)."""
        labels = [grade_label(r.first_grade if first else r.grade) for r in self.records]
        return {k: labels.count(k) for k in ("correct", "wrong", "refused", "uncertain")}

    def concern_rates(self) -> list[dict[str, Any]]:
        """Per round: how many questions reached it (``asked``), on how many its decision raised a concern
        (``concerned``: a gate fired, a gated value was missing, or the answer was invalid) and the ``rate``."""
        out = []
        for r in range(1, max((len(t.rounds) for t in self.traces), default=0) + 1):
            reached = [t.rounds[r - 1].decision for t in self.traces if len(t.rounds) >= r]
            concerned = sum(bool(d.concerns) for d in reached)
            out.append({"round": r, "asked": len(reached), "concerned": concerned,
                        "rate": concerned / len(reached) if reached else math.nan})
        return out

    def accuracy_ci(self, level: float = 0.95):
        """Accuracy with its Wilson interval (:func:`uncertainty_lab.semantic.evaluation.accuracy_ci`) over the
        answers the grader decided on (``label_counts()["uncertain"]`` says how many it could not; none decided:
        NaN, 0 of 0)."""
        from ..semantic.evaluation import ProportionCI, accuracy_ci

        labels = self.decided()[0]
        if not labels.size:
            return ProportionCI(0, 0, math.nan, math.nan, math.nan, level, "Wilson")
        return accuracy_ci(labels, level=level)

    @property
    def model_calls(self) -> np.ndarray:
        return np.array([r.trace.model_calls for r in self.records], dtype=float)

    @property
    def wall_time(self) -> np.ndarray:
        return np.array([r.trace.wall_time_s for r in self.records], dtype=float)

    @property
    def n_rounds(self) -> np.ndarray:
        return np.array([len(r.trace.rounds) for r in self.records], dtype=float)

    def first_signal(self, role: str) -> np.ndarray:
        """The first-round signal of ``role`` per question, as a confidence (higher = surer): 1 − H/ln n for
        ``entropy``, the density for ``density``, the logged confidence for any other role; NaN = missing."""
        out = []
        for r in self.records:
            s = r.trace.first_signals
            if role == "entropy":
                out.append(1.0 - s.entropy)
            elif role == "density":
                out.append(s.density)
            else:
                out.append(s.extra.get(role, math.nan))
        return np.array(out, dtype=float)

    def action_counts(self) -> dict[str, int]:
        """How often each decision was taken, over all rounds and questions."""
        out: dict[str, int] = {}
        for r in self.records:
            for a in r.trace.actions:
                out[a] = out.get(a, 0) + 1
        return out

    def judge_cache(self) -> dict[str, float]:
        """Pair-judgement cache hits and misses summed over the questions, and the hit rate."""
        hits = sum(r.trace.judge_hits for r in self.records)
        misses = sum(r.trace.judge_misses for r in self.records)
        return {"hits": hits, "misses": misses, "hit_rate": hits / (hits + misses) if hits + misses else math.nan}


#: Deprecated alias of :class:`OrchestrationRun` (the old name); removed in 0.3.
BenchmarkRun = OrchestrationRun


def policy_of(run: OrchestrationRun) -> Policy:
    """The :class:`Policy` a run used, rebuilt from its header."""
    return get_policy(dict(run.config["coordinator"]["policy"]))


def gate_of(run: OrchestrationRun, policy: Any = None) -> Policy:
    """The policy that judges a run's first-round signals: ``policy`` when given, else the run's own policy when
    it gates, else ``both`` (a run of the plain hierarchy has no gate of its own)."""
    if policy is not None:
        return get_policy(policy)
    p = policy_of(run)
    return p if p.metrics else get_policy("both")
