"""The grader audit set: answers we wrote and labelled by hand (``correct``, ``wrong`` or ``refused``), each with its
question, correct and incorrect references and the grading failure mode it exercises — the yardstick every answer
grader is measured against (data card: ``datasets/data/grader_audit.md``). Nothing here touches the network.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib import resources

from uncertainty_lab.datasets.files import DEFAULT_MAX_BYTES, DatasetFormatError, json_records, shipped_or_file
from uncertainty_lab.datasets.subset import check_subset, take

__all__ = ["AUDIT_LABELS", "AUDIT_SPLITS", "AUDIT_STYLES", "FAILURE_MODES", "AuditItem", "load_grader_audit"]

#: The hand labels.
AUDIT_LABELS: tuple[str, ...] = ("correct", "wrong", "refused")
#: ``dev``: written while the ``strict`` grader's rules were built (in-sample for it); ``holdout``: written after
#: they were frozen, never used to tune them.
AUDIT_SPLITS: tuple[str, ...] = ("dev", "holdout")
#: Which public data set's style an item imitates (the items themselves are ours).
AUDIT_STYLES: tuple[str, ...] = ("truthfulqa", "strategyqa", "short")
#: The grading failure modes the set exercises (``plain_*`` are controls).
FAILURE_MODES: tuple[str, ...] = (
    "plain_correct", "plain_wrong", "bare_alias_in_false_sentence", "incorrect_alias_in_true_sentence",
    "refusal", "refusal_as_gold", "echoed_instruction", "verdict_sentence", "paraphrase_correct",
    "paraphrase_incorrect", "hedged", "negation", "numbers_units")

_FILE = "data/grader_audit.jsonl"
_FIELDS = ("id", "split", "style", "question", "references", "incorrect", "answer", "label", "failure_mode")


@dataclass(frozen=True)
class AuditItem:
    """One labelled answer: the ``question``, its correct ``references`` and ``incorrect`` ones, the ``answer``
    a model might give, our ``label`` for it and the ``failure_mode`` it exercises; ``style`` says which data
    set's items it imitates; ``split`` whether it was written before the ``strict`` rules were frozen (``dev``)
    or after (``holdout``)."""

    id: str
    split: str
    style: str
    question: str
    references: tuple[str, ...]
    incorrect: tuple[str, ...]
    answer: str
    label: str
    failure_mode: str


def _item(record, row: str, where: str) -> AuditItem:
    if not isinstance(record, dict):
        raise DatasetFormatError(where, f"expected a JSON object, got {type(record).__name__}", row=row)
    missing = [k for k in _FIELDS if k not in record]
    unknown = sorted(set(record) - set(_FIELDS))
    if missing or unknown:
        from ..untrusted import listing

        raise DatasetFormatError(where, f"fields [{listing(missing)}] are missing and [{listing(unknown)}] unknown; "
                                 "the schema has "
                                 f"{', '.join(_FIELDS)}", row=row)
    for name, allowed in (("label", AUDIT_LABELS), ("split", AUDIT_SPLITS), ("style", AUDIT_STYLES), ("failure_mode", FAILURE_MODES)):
        if record[name] not in allowed:
            raise DatasetFormatError(where, f"{name} must be one of {', '.join(allowed)}, got {record[name]!r}",
                                     row=row, column=name)
    for name in ("references", "incorrect"):
        value = record[name]
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            raise DatasetFormatError(where, f"{name} must be a list of non-empty strings", row=row, column=name)
    if not record["references"]:
        raise DatasetFormatError(where, "references is empty: give at least one correct answer", row=row,
                                 column="references")
    for name in ("id", "question", "answer"):
        if not isinstance(record[name], str) or not record[name].strip():
            raise DatasetFormatError(where, f"{name} must be a non-empty string", row=row, column=name)
    return AuditItem(record["id"], record["split"], record["style"], record["question"], tuple(record["references"]),
                     tuple(record["incorrect"]), record["answer"], record["label"], record["failure_mode"])


def load_grader_audit(path: str | os.PathLike[str] | None = None, *, split: str | None = None,
                      limit: int | None = None, sample: int | None = None, seed: int = 0,
                      max_bytes: int | None = DEFAULT_MAX_BYTES) -> list[AuditItem]:
    """The shipped audit set (``path=None``) or your own file in its schema (JSON lines or a JSON list of
    objects with the fields of :class:`AuditItem`); ids must be unique. ``split`` (``dev`` or ``holdout``; None =
    both) keeps one part; then ``sample`` / ``limit``."""
    check_subset(limit, sample, seed)
    if split is not None and split not in AUDIT_SPLITS:
        raise ValueError(f"split must be one of {', '.join(AUDIT_SPLITS)} or None, got {split!r}")
    where, text = shipped_or_file(path, resources.files("uncertainty_lab.datasets").joinpath(_FILE),
                                  max_bytes=max_bytes)
    items, seen = [], {}
    for row, record in json_records(text, where, what="audit answers", record_keys=("id", "answer")):
        item = _item(record, row, where)
        if item.id in seen:
            raise DatasetFormatError(where, f"duplicate id {item.id!r} (first at {seen[item.id]})", row=row,
                                     column="id")
        seen[item.id] = row
        if split is None or item.split == split:
            items.append(item)
    return take(items, limit=limit, sample=sample, seed=seed)
