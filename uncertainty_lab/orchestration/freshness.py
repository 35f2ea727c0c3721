"""Whether a resumed run file's questions still stand: each recorded answer is checked against what it depends on —
the item's question and references (content hashes, :mod:`uncertainty_lab.provenance`) and the grader's settings.

- the question of an item changed: the recorded answer is for another question — refused, naming the item ids and
  the way out (``overwrite = true`` or another ``out_dir``);
- only the references (``answers``, ``incorrect``, ``behaviour``) or the grader changed: the recorded answers are
  re-graded (no model is asked), one warning line says which and why;
- a record whose trace holds a failed model call (written before failures were raised) is no answer: it is dropped
  and the question asked again.

A file written before the hashes were recorded is checked all the same: every record holds its item as it was,
so its hashes are computed from that (and its grader from the header's ``config``).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..journal import Journal
from ..provenance import StaleResultWarning, item_changes, item_hashes
from .errors import OrchestrationResumeError
from .grading import grade_trace
from .record import QuestionRecord

__all__ = ["Freshness", "StaleResultWarning", "check_records", "failed_call"]


@dataclass
class Freshness:
    """What the check did: the ``records`` kept (re-graded where needed), the ids ``regraded`` and ``redo`` (failed
    calls, asked again), and ``changed`` (whether the file must be rewritten)."""

    records: list[QuestionRecord]
    regraded: list[str] = field(default_factory=list)
    redo: list[str] = field(default_factory=list)
    changed: bool = False


def failed_call(rec: QuestionRecord) -> str | None:
    """The first failed model call a record's trace holds (an old file's "LLMError: …" answers), or None."""
    for rnd in rec.trace.rounds:
        for cand in rnd.candidates:
            if cand.answer.error:
                return cand.answer.error
    return None


def recorded_hashes(rec: Mapping[str, Any]) -> dict[str, str]:
    """A body record's item hashes: as recorded, else computed from the item it holds (an older file)."""
    return dict(rec.get("depends") or item_hashes(rec["item"]))


def _ids(ids: list[str]) -> str:
    return ", ".join(repr(i) for i in ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")


def check_records(path: Path, journal: Journal, items: list[dict[str, Any]], grader: Any,
                  grader_now: Any) -> Freshness:
    """Check the records of ``journal`` (the run file at ``path``) against the current ``items`` and ``grader``
    (whose settings are ``grader_now``): see the module doc. Raises :class:`OrchestrationResumeError` when a
    question changed."""
    by_id = {it["id"]: it for it in items}
    current = {key: item_hashes(it) for key, it in by_id.items()}
    recorded = {r["id"]: recorded_hashes(r) for r in journal.body}
    asked, refs = item_changes(recorded, current)
    if asked:
        raise OrchestrationResumeError(
            f"cannot resume {path}: the question of item {_ids(asked)} changed since it was run, so its recorded "
            "answer is for another question; set overwrite = true (or choose another out_dir) to ask it afresh")
    depends = (journal.header or {}).get("depends") or {}
    grader_then = depends["grader"] if "grader" in depends else journal.config.get("grader")
    regrade_all = grader_then != grader_now
    out = Freshness([])
    for raw in journal.body:
        rec = QuestionRecord.from_dict(raw)
        if failed_call(rec) is not None:
            out.redo.append(rec.id)
            continue
        if regrade_all or rec.id in refs:
            rec.item = by_id[rec.id]
            rec.grade, rec.first_grade = grade_trace(grader, rec.item, rec.trace)
            out.regraded.append(rec.id)
        out.records.append(rec)
    out.changed = bool(out.regraded or out.redo)
    why = ("the grader changed" if regrade_all else "their references changed in the data")
    if out.regraded:
        warnings.warn(f"{path}: re-graded {len(out.regraded)} recorded answer(s) ({_ids(out.regraded)}) because "
                      f"{why}; no model was asked", StaleResultWarning, stacklevel=3)
    if out.redo:
        warnings.warn(f"{path}: {len(out.redo)} question(s) ({_ids(out.redo)}) hold a failed model call, not an "
                      "answer; asking them again", StaleResultWarning, stacklevel=3)
    return out
