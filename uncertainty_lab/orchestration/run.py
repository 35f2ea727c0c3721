"""Run one unit — a coordinator over a list of questions — streaming one record per question to its run file.

:func:`run_benchmark` grades each final and first-round answer, writes the question's record as soon as it is
done (an interruption loses at most the question being asked) and resumes a run file made with the same
configuration where it ends; a finished file comes back without a model call.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..jsonsafe import jsonable
from ..progress import bar as progress_bar
from .errors import OrchestrationError, OrchestrationResumeError
from .grading import QAGrader
from .record import FORMAT, OrchestrationRun, QuestionRecord

__all__ = ["as_items", "resolve_grader", "run_benchmark"]


def _as_item(item: Any, index: int) -> dict[str, Any]:
    if isinstance(item, str):
        return {"id": f"q{index:04d}", "question": item, "answers": None}
    if isinstance(item, Mapping):
        if "question" not in item:
            raise OrchestrationError(f"items[{index}] has no 'question': {dict(item)!r}")
        d = dict(item)
        d.setdefault("id", f"q{index:04d}")
        d.setdefault("answers", None)
        return jsonable(d)
    to_dict = getattr(item, "to_dict", None)
    if callable(to_dict) and hasattr(item, "question"):
        return jsonable(to_dict())
    raise OrchestrationError(f"items[{index}] must be a QAItem, a dict with 'question', or a string; got {type(item).__name__}")


def as_items(items: Iterable[Any]) -> list[dict[str, Any]]:
    """QAItems, ``{"id", "question", "answers", ...}`` dicts or question strings as item dicts with unique ids
    (a string or a dict without an id gets ``q0000``, ``q0001``, … by position)."""
    out = [_as_item(it, i) for i, it in enumerate(items)]
    ids = [it["id"] for it in out]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise OrchestrationError(f"item ids must be unique; {dup!r} appears twice")
    return out


def resolve_grader(grader: Any) -> Any:
    """``"default"`` → :class:`QAGrader` (containment, refusal markers for decline items); None (ungraded) or a
    callable ``(item, answer, raw) -> {"correct", ...}`` as given."""
    if isinstance(grader, str) and grader == "default":
        return QAGrader()
    if grader is not None and not callable(grader):
        raise OrchestrationError(f"grader must be 'default', None or a callable (item, answer, raw), got {grader!r}")
    return grader


def _grader_config(grader: Any) -> Any:
    if callable(getattr(grader, "config", None)):
        return grader.config()
    return None if grader is None else getattr(grader, "__name__", type(grader).__name__)


def _ask(coordinator: Any, index: int, item: dict[str, Any], grader: Any) -> QuestionRecord:
    """One question: the coordinator's trace, the final answer's grade and the first-round answer's grade."""
    trace = coordinator.run(item["question"])
    grade = first = None
    if grader is not None and item.get("answers") is not None:
        grade = jsonable(grader(item, trace.final.answer, trace.final.raw))
        c0 = trace.rounds[0].candidate.answer
        first = jsonable(grader(item, c0.answer, c0.raw))
    return QuestionRecord(index, item["id"], item, trace, grade, first)


def run_benchmark(coordinator: Any, items: Iterable[Any], out: str | os.PathLike | None = None, *,
                  grader: Any = "default", resume: bool = True, progress: bool = True,
                  extra_config: Mapping[str, Any] | None = None, desc: str | None = None) -> OrchestrationRun:
    """Run every item (see :func:`as_items`) through ``coordinator`` (a :class:`~.coordinator.Coordinator`),
    streaming one record per question to ``out`` (a run file; None = in memory). An existing ``out`` with the
    same configuration is resumed (the questions already there are kept); another configuration raises
    :class:`OrchestrationResumeError`; ``resume=False`` overwrites. ``grader`` (see :func:`resolve_grader`)
    grades the final and the first-round answers; ``extra_config`` joins the header's configuration."""
    items = as_items(items)
    ids = [it["id"] for it in items]
    grader = resolve_grader(grader)
    config = jsonable({"coordinator": coordinator.config(), "grader": _grader_config(grader), "items": ids,
                       **dict(extra_config or {})})
    path = None if out is None else Path(out)
    journal, writer = FORMAT.open(path, config, resume=resume, allow_nan=False)
    try:
        records = [QuestionRecord.from_dict(r) for r in journal.body] if journal is not None else []
        done = [r.id for r in records]
        if done != ids[:len(done)]:
            raise OrchestrationResumeError(f"{path}: its questions {done[:3]}... are not the start of the items")
        if journal is not None and journal.end is not None and len(records) == len(ids):
            return OrchestrationRun(config, records, True, path)
        bar = progress_bar(total=len(items), initial=len(records), show=progress,
                           desc=desc or f"orchestrate [{coordinator.policy.name}]", leave=False)
        for index in range(len(records), len(items)):
            rec = _ask(coordinator, index, items[index], grader)
            records.append(rec)
            writer.write(rec.to_dict())
            bar.update(1)
        bar.close()
        writer.write({"type": "end", "n": len(records)})
    finally:
        writer.close()
    return OrchestrationRun(config, records, True, path)
