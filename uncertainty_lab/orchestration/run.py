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

from ..journal import JournalWriter, rewrite
from ..jsonsafe import jsonable
from ..llm import LLMError
from ..progress import bar as progress_bar
from ..provenance import grader_settings, item_hashes
from .errors import OrchestrationError
from .freshness import check_records
from .grading import QAGrader, grade_trace
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
    """What a grader's grades depend on (:func:`uncertainty_lab.provenance.grader_settings`)."""
    return grader_settings(grader)


def _ask(coordinator: Any, index: int, item: dict[str, Any], grader: Any) -> QuestionRecord:
    """One question: the coordinator's trace, the final answer's grade and the first-round answer's grade. A model
    call that failed (after its retries) is raised with the item's id: the question is not recorded."""
    try:
        trace = coordinator.run(item["question"])
    except LLMError as exc:
        try:
            named = type(exc)(f"question {item['id']!r}: {exc}")
        except TypeError:  # an error class whose constructor takes other arguments
            named = LLMError(f"question {item['id']!r}: {type(exc).__name__}: {exc}")
        raise named from exc
    grade, first = grade_trace(grader, item, trace)
    return QuestionRecord(index, item["id"], item, trace, grade, first)


def _resume(path: Path, journal: Any, items: list[dict[str, Any]], grader: Any, header: dict[str, Any],
            writer: Any) -> tuple[list[QuestionRecord], Any, bool]:
    """The records of a resumed run file still standing (:func:`~.freshness.check_records`), the file rewritten
    with them and the current header when anything it records changed (then without its end record), the writer
    to append with, and whether the file was rewritten."""
    fresh = check_records(path, journal, items, grader, header["depends"]["grader"])
    old = journal.header or {}
    if fresh.changed or old.get("depends") != header["depends"]:
        writer.close()
        order = {it["id"]: i for i, it in enumerate(items)}
        records = sorted(fresh.records, key=lambda r: order[r.id])
        body = [_with_depends(r) for r in records]
        rewrite(path, [{**old, **header, "type": "header", "format": FORMAT.name}, *body], allow_nan=False)
        return records, JournalWriter(path, "a", allow_nan=False), True
    return fresh.records, writer, False


def _with_depends(rec: QuestionRecord) -> dict[str, Any]:
    """A question's body record with the hashes of its item (what its answer and grades depend on)."""
    return {**rec.to_dict(), "depends": item_hashes(rec.item)}


def run_benchmark(coordinator: Any, items: Iterable[Any], out: str | os.PathLike | None = None, *,
                  grader: Any = "default", resume: bool = True, progress: bool = True,
                  extra_config: Mapping[str, Any] | None = None, desc: str | None = None,
                  offset: int = 0, depends: Mapping[str, Any] | None = None) -> OrchestrationRun:
    """Run every item (see :func:`as_items`) through ``coordinator`` (a :class:`~.coordinator.Coordinator`),
    streaming one record per question to ``out`` (a run file; None = in memory). An existing ``out`` with the
    same configuration is resumed (the questions already there are kept); another configuration raises
    :class:`OrchestrationResumeError`; ``resume=False`` overwrites. ``grader`` (see :func:`resolve_grader`)
    grades the final and the first-round answers; ``extra_config`` joins the header's configuration; ``offset`` is
    the first item's position in a longer list this run is a chunk of (each record's ``index`` counts from it).

    The header's ``depends`` records what the grades depend on — the grader's settings, each item's hashes
    (:func:`~uncertainty_lab.provenance.item_hashes`) and ``depends`` given (the data file's hash) — and each
    question record its item's hashes. Resuming checks them (:mod:`.freshness`): a changed question is refused,
    changed references or grader re-grade the recorded answers without asking the model, a recorded failed call is
    asked again. A failed model call raises (the questions before it stay recorded; a rerun resumes)."""
    items = as_items(items)
    ids = [it["id"] for it in items]
    grader = resolve_grader(grader)
    config = jsonable({"coordinator": coordinator.config(), "items": ids, **dict(extra_config or {})})
    header = {"depends": jsonable({**dict(depends or {}), "grader": _grader_config(grader),
                                   "items": {it["id"]: item_hashes(it) for it in items}})}
    path = None if out is None else Path(out)
    journal, writer = FORMAT.open(path, config, resume=resume, allow_nan=False, moved=("grader",), **header)
    try:
        records: list[QuestionRecord] = []
        if journal is not None:
            records, writer, rewritten = _resume(path, journal, items, grader, header, writer)
            if journal.end is not None and len(records) == len(ids) and not rewritten:
                return OrchestrationRun(config, records, True, path, header["depends"]["grader"])
        done = {r.id for r in records}
        bar = progress_bar(total=len(items), initial=len(done), show=progress,
                           desc=desc or f"orchestrate [{coordinator.policy.name}]", leave=False)
        for index, item in enumerate(items):
            if item["id"] in done:
                continue
            rec = _ask(coordinator, offset + index, item, grader)
            records.append(rec)
            writer.write(_with_depends(rec))
            bar.update(1)
        bar.close()
        writer.write({"type": "end", "n": len(records)})
    finally:
        writer.close()
    order = {key: i for i, key in enumerate(ids)}
    return OrchestrationRun(config, sorted(records, key=lambda r: order[r.id]), True, path,
                            header["depends"]["grader"])
