"""TruthfulQA: read the ``TruthfulQA.csv`` you downloaded (github.com/sylinrl/TruthfulQA) into :class:`QAItem` s.

The data set has one file and no splits (817 questions). Nothing here touches the network.
"""

from __future__ import annotations

import csv
import io
import os
from collections import Counter
from typing import Any

from uncertainty_lab.datasets.files import DEFAULT_MAX_BYTES, DatasetFormatError, read_text
from uncertainty_lab.datasets.qa import QAItem
from uncertainty_lab.datasets.subset import check_subset, take
from uncertainty_lab.untrusted import listing

__all__ = ["TRUTHFULQA_COLUMNS", "load_truthfulqa_csv"]

#: The columns of the published CSV (the 2025 file adds ``Best Incorrect Answer``).
TRUTHFULQA_COLUMNS = ("Type", "Category", "Question", "Best Answer", "Correct Answers", "Incorrect Answers", "Source")
_REQUIRED = ("Question", "Best Answer", "Correct Answers", "Incorrect Answers")


def load_truthfulqa_csv(
    path: str | os.PathLike[str],
    *,
    category: str = "false_premise",
    limit: int | None = None,
    sample: int | None = None,
    seed: int = 0,
    max_bytes: int | None = DEFAULT_MAX_BYTES,
) -> list[QAItem]:
    """Read a TruthfulQA CSV you downloaded (``TruthfulQA.csv`` from github.com/sylinrl/TruthfulQA).

    Columns: ``Type, Category, Question, Best Answer, Correct Answers, Incorrect Answers, Source`` (the 2025 file
    also has ``Best Incorrect Answer``, used when present). ``Correct Answers`` and ``Incorrect Answers`` hold
    several answers separated by ``"; "``. Gold ``answers`` are the best answer followed by the correct ones;
    ``incorrect`` the best incorrect answer followed by the incorrect ones (duplicates after normalisation are
    dropped). Every item gets ``category`` (default ``"false_premise"``, the shipped category written in
    TruthfulQA's style; pass ``"truthfulqa"`` to keep them apart); TruthfulQA's own Type, Category and Source
    go to ``meta``. Ids are ``truthfulqa-0001`` … in row order. Then ``sample`` / ``limit``.
    """
    check_subset(limit, sample, seed)
    text = read_text(path, max_bytes=max_bytes)
    reader = csv.DictReader(io.StringIO(text, newline=""), strict=True)
    header = _header(reader, path, text)
    records = _rows(reader, path, header, text.endswith("\n"))
    items = [_item(record, n, row, path, category) for n, (row, record) in enumerate(records, start=1)]
    return take(items, limit=limit, sample=sample, seed=seed)


def _header(reader: csv.DictReader, path, text: str) -> list[str]:
    try:
        header = reader.fieldnames
    except csv.Error as exc:
        raise DatasetFormatError(path, f"not a readable CSV header ({exc})", row="line 1") from None
    if not header:
        raise DatasetFormatError(path, "empty file; expected a header row with " + ", ".join(TRUTHFULQA_COLUMNS))
    stripped = [h.strip() if h else h for h in header]
    reader.fieldnames = stripped
    doubled = [h for h, n in Counter(stripped).items() if n > 1]
    if doubled:
        raise DatasetFormatError(path, f"column {listing(doubled)} appears more than once in the header (a CSV reader "
                                 "would keep only the last); rename or remove the duplicate",
                                 row="line 1 (header)")
    missing = [c for c in _REQUIRED if c not in stripped]
    if missing:
        hint = ""
        if text.lstrip()[:1] in ("[", "{"):
            hint = " (this file is JSON, not the TruthfulQA CSV)"
        elif len(stripped) == 1 and "\t" in (stripped[0] or ""):
            hint = " (the header has tabs: TruthfulQA.csv is comma-separated)"
        raise DatasetFormatError(
            path,
            f"missing column(s) {listing(missing)}; found {listing(stripped, 12)}{hint}. "
            f"A TruthfulQA CSV has the columns {', '.join(TRUTHFULQA_COLUMNS)}",
            row="line 1 (header)",
        )
    return stripped


def _rows(reader: csv.DictReader, path, header: list[str], ends_in_newline: bool) -> list[tuple[str, dict]]:
    """``(row label, record)`` for every data row; a row cut short at the end of the file is reported as such."""
    out: list[tuple[str, dict]] = []
    while True:
        try:
            record = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            if "unexpected end of data" in str(exc):
                raise DatasetFormatError.cut_short(path, reader.line_num) from None
            raise DatasetFormatError(path, f"malformed CSV ({exc})",
                                     row=f"row {len(out) + 1} (line {reader.line_num})") from None
        out.append((f"row {len(out) + 1} (ending on line {reader.line_num})", record))
    for k, (row, record) in enumerate(out):
        if None in record:  # more fields than header columns
            raise DatasetFormatError(path, f"{len(header) + len(record[None])} fields but the header has "
                                     f"{len(header)} columns (an unquoted comma?)", row=row)
        if k == len(out) - 1 and not ends_in_newline and any(record.get(c) is None for c in header):
            raise DatasetFormatError.cut_short(path, reader.line_num)
        short = [c for c in _REQUIRED if record.get(c) is None]
        if short:
            raise DatasetFormatError(path, f"the row has fewer fields than the header ({short[0]!r} is absent)",
                                     row=row, column=short[0])
    return out


def _item(record: dict[str, Any], n: int, row: str, path, category: str) -> QAItem:
    question = record["Question"].strip()
    if not question:
        raise DatasetFormatError(path, "empty question", row=row, column="Question")
    best = record["Best Answer"].strip()
    answers = _dedupe(([best] if best else []) + _split_answers(record["Correct Answers"]))
    if not answers:
        raise DatasetFormatError(path, "no gold answer: 'Best Answer' and 'Correct Answers' are both empty",
                                 row=row, column="Best Answer")
    best_wrong = (record.get("Best Incorrect Answer") or "").strip()
    incorrect = _dedupe(([best_wrong] if best_wrong else []) + _split_answers(record["Incorrect Answers"]))
    meta = {key: record[col].strip() for key, col in (("type", "Type"), ("truthfulqa_category", "Category"),
                                                      ("source", "Source")) if record.get(col)}
    note = "TruthfulQA"
    if "type" in meta and "truthfulqa_category" in meta:
        note += f" ({meta['type']}, {meta['truthfulqa_category']})"
    try:
        return QAItem(id=f"truthfulqa-{n:04d}", category=category, question=question, answers=answers,
                      incorrect=incorrect, note=note, source="truthfulqa", meta=meta)
    except ValueError as exc:
        raise DatasetFormatError(path, str(exc), row=row) from None


def _split_answers(cell: str) -> list[str]:
    return [part.strip() for part in cell.split(";") if part.strip()]


def _dedupe(answers: list[str]) -> list[str]:
    from uncertainty_lab.semantic.text import normalise_answer

    seen: set[str] = set()
    out = []
    for answer in answers:
        key = normalise_answer(answer) or answer
        if key not in seen:
            seen.add(key)
            out.append(answer)
    return out
