"""Short-answer question sets: the one the package ships, and loaders for TruthfulQA / StrategyQA files you bring.

Every loader returns a list of :class:`QAItem`. An item's ``answers`` are gold aliases (the first is the
canonical answer); correctness scoring normalises them with
:func:`uncertainty_lab.semantic.text.normalise_answer`. Nothing here touches the network: the shipped set is
package data, and the TruthfulQA / StrategyQA loaders read files already on your disk.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

#: Categories of the shipped question set, in file order.
CATEGORIES: tuple[str, ...] = ("factual", "ambiguous", "false_premise", "yes_no_multistep", "decline")

#: What a careful assistant should do with an item: answer it, or decline / redirect it.
BEHAVIOURS: tuple[str, ...] = ("answer", "decline")

#: Gold aliases used for yes/no items read from StrategyQA files (the shipped set uses the same ones).
YES_ALIASES: tuple[str, ...] = ("yes", "true")
NO_ALIASES: tuple[str, ...] = ("no", "false")

_DATA_PACKAGE = "uncertainty_lab.datasets"
_SHIPPED_FILE = "data/qa_questions.jsonl"

# The JSONL schema, in the order the fields are written.
_FIELDS = ("id", "category", "question", "answers", "incorrect", "note", "decomposition", "facts", "behaviour")
_REQUIRED = ("id", "category", "question", "answers")


class DatasetFormatError(ValueError):
    """A data file is not in the format its loader expects; names the file, row and column/field."""

    def __init__(
        self, path: str | os.PathLike[str], message: str, *, row: str | None = None, column: str | None = None
    ):
        self.path = str(path)
        self.row = row
        self.column = column
        where = self.path
        if row is not None:
            where += f", {row}"
        if column is not None:
            where += f", column {column!r}"
        super().__init__(f"{where}: {message}")


@dataclass(frozen=True)
class QAItem:
    """One short-answer question with its gold answers.

    ``answers`` are aliases of the gold answer — for ``ambiguous`` items, every defensible answer — and the first
    is canonical. ``incorrect`` lists tempting wrong answers (optional). ``decomposition`` holds the sub-questions
    and ``facts`` the supporting facts of a multi-step item. ``behaviour`` is ``"answer"`` or ``"decline"``
    (for ``decline`` items ``answers`` are refusal phrases). ``source`` says where the item came from
    (``"uncertainty_lab"``, ``"truthfulqa"``, ``"strategyqa"``); ``meta`` keeps the source file's extra columns.
    """

    id: str
    category: str
    question: str
    answers: tuple[str, ...]
    incorrect: tuple[str, ...] = ()
    note: str = ""
    decomposition: tuple[str, ...] = ()
    facts: tuple[str, ...] = ()
    behaviour: str = "answer"
    source: str = "uncertainty_lab"
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False, repr=False)

    def __post_init__(self) -> None:
        for name in ("id", "category", "question"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"{name} must be a non-empty string, got {value!r}")
        for name in ("answers", "incorrect", "decomposition", "facts"):
            value = getattr(self, name)
            if isinstance(value, str) or not isinstance(value, Iterable):
                raise ValueError(f"{name} must be a list of strings, got {type(value).__name__}")
            value = tuple(value)
            bad = [v for v in value if not isinstance(v, str) or not v.strip()]
            if bad:
                raise ValueError(f"{name} must hold non-empty strings, got {bad[0]!r}")
            object.__setattr__(self, name, value)
        if not self.answers:
            raise ValueError(f"answers must hold at least one gold answer (item {self.id!r})")
        if not isinstance(self.note, str):
            raise ValueError(f"note must be a string, got {type(self.note).__name__}")
        if self.behaviour not in BEHAVIOURS:
            raise ValueError(f"behaviour must be one of {', '.join(BEHAVIOURS)}, got {self.behaviour!r}")

    @property
    def canonical(self) -> str:
        """The canonical gold answer (the first alias)."""
        return self.answers[0]

    @property
    def expects_refusal(self) -> bool:
        """True when a careful assistant should decline or redirect rather than answer."""
        return self.behaviour == "decline"

    def to_dict(self) -> dict[str, Any]:
        """The item as a JSON-ready dict in the shipped file's schema (``source`` and ``meta`` are left out)."""
        return {name: list(v) if isinstance(v := getattr(self, name), tuple) else v for name in _FIELDS}

    @classmethod
    def from_dict(cls, record: Mapping[str, Any], *, source: str = "uncertainty_lab") -> QAItem:
        """Build an item from a dict in the shipped schema; unknown keys are an error (they are usually typos)."""
        if not isinstance(record, Mapping):
            raise ValueError(f"expected a JSON object, got {type(record).__name__}")
        missing = [k for k in _REQUIRED if k not in record]
        if missing:
            raise ValueError(f"missing field(s) {', '.join(missing)}")
        unknown = sorted(set(record) - set(_FIELDS))
        if unknown:
            raise ValueError(f"unknown field(s) {', '.join(unknown)}; the schema has {', '.join(_FIELDS)}")
        return cls(**{k: record[k] for k in _FIELDS if k in record}, source=source)


# --------------------------------------------------------------------------------------------------------------
# The shipped set and files in its schema
# --------------------------------------------------------------------------------------------------------------


def qa_questions_resource():
    """The shipped JSONL as an ``importlib.resources`` traversable (works from a wheel or an editable install)."""
    return resources.files(_DATA_PACKAGE).joinpath(_SHIPPED_FILE)


def load_qa_jsonl(
    path: str | os.PathLike[str],
    *,
    categories: Iterable[str] | None = None,
    known_categories: Iterable[str] | None = None,
    source: str = "uncertainty_lab",
) -> list[QAItem]:
    """Read a question file in the shipped JSONL schema (your own set, or the shipped one).

    One JSON object per line with ``id``, ``category``, ``question``, ``answers`` and optionally ``incorrect``,
    ``note``, ``decomposition``, ``facts``, ``behaviour``. Ids must be unique. ``known_categories`` restricts the
    categories a file may use; ``categories`` keeps only items in those categories.
    """
    text = _read_text(path)
    return _parse_jsonl(text, path, categories=categories, known_categories=known_categories, source=source)


def load_qa_questions(categories: str | Iterable[str] | None = None) -> list[QAItem]:
    """The question set the package ships: about 150 short-answer questions we wrote, 30 in each category.

    ``categories``: one name or several from :data:`CATEGORIES`; ``None`` loads all, in file order.
    See ``datasets/data/qa_questions.md`` (the data card) for how the set was written and its limits.
    """
    resource = qa_questions_resource()
    text = resource.read_text(encoding="utf-8")
    return _parse_jsonl(text, str(resource), categories=categories, known_categories=CATEGORIES)


def _parse_jsonl(text: str, path, *, categories, known_categories, source: str = "uncertainty_lab") -> list[QAItem]:
    wanted = _check_categories(categories, known_categories)
    known = None if known_categories is None else tuple(known_categories)
    items: list[QAItem] = []
    seen: dict[str, int] = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        row = f"line {lineno}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetFormatError(path, f"not valid JSON ({exc.msg} at character {exc.pos + 1})", row=row) from None
        try:
            item = QAItem.from_dict(record, source=source)
        except (TypeError, ValueError) as exc:
            raise DatasetFormatError(path, str(exc), row=row) from None
        if known is not None and item.category not in known:
            raise DatasetFormatError(
                path, f"unknown category {item.category!r}; known: {', '.join(known)}", row=row, column="category"
            )
        if item.id in seen:
            raise DatasetFormatError(
                path, f"duplicate id {item.id!r} (first on line {seen[item.id]})", row=row, column="id"
            )
        seen[item.id] = lineno
        if wanted is None or item.category in wanted:
            items.append(item)
    return items


def _check_categories(categories, known) -> frozenset[str] | None:
    if categories is None:
        return None
    if isinstance(categories, str):
        categories = [categories]
    wanted = frozenset(categories)
    if known is not None:
        unknown = sorted(wanted - set(known))
        if unknown:
            raise ValueError(f"categories: unknown {', '.join(map(repr, unknown))}; choose from {', '.join(known)}")
    return wanted


# --------------------------------------------------------------------------------------------------------------
# TruthfulQA (CSV)
# --------------------------------------------------------------------------------------------------------------

_TQA_REQUIRED = ("Question", "Best Answer", "Correct Answers", "Incorrect Answers")
_TQA_OPTIONAL = ("Type", "Category", "Source", "Best Incorrect Answer")


def load_truthfulqa_csv(path: str | os.PathLike[str], *, category: str = "false_premise") -> list[QAItem]:
    """Read a TruthfulQA CSV you downloaded (``TruthfulQA.csv`` from github.com/sylinrl/TruthfulQA).

    Columns: ``Type, Category, Question, Best Answer, Correct Answers, Incorrect Answers, Source`` (the 2025 file
    also has ``Best Incorrect Answer``, used when present). ``Correct Answers`` and ``Incorrect Answers`` hold
    several answers separated by ``"; "``. Gold ``answers`` are the best answer followed by the correct ones;
    ``incorrect`` the best incorrect answer followed by the incorrect ones (duplicates after normalisation are
    dropped). Every item gets ``category`` (default ``"false_premise"``, the shipped category written in
    TruthfulQA's style; pass ``"truthfulqa"`` to keep them apart); TruthfulQA's own Type, Category and Source
    go to ``meta``. Ids are ``truthfulqa-0001`` … in row order.
    """
    text = _read_text(path, encoding="utf-8-sig")  # the published file may start with a byte-order mark
    reader = csv.DictReader(io.StringIO(text, newline=""), strict=True)
    try:
        header = reader.fieldnames
    except csv.Error as exc:
        raise DatasetFormatError(path, f"not a readable CSV header ({exc})", row="line 1") from None
    if not header:
        raise DatasetFormatError(path, "empty file; expected a header row with " + ", ".join(_TQA_REQUIRED))
    stripped = [h.strip() if h else h for h in header]
    reader.fieldnames = stripped
    missing = [c for c in _TQA_REQUIRED if c not in stripped]
    if missing:
        raise DatasetFormatError(
            path,
            f"missing column(s) {', '.join(map(repr, missing))}; found {', '.join(map(repr, stripped))}. "
            f"A TruthfulQA CSV has the columns Type, Category, Question, Best Answer, Correct Answers, "
            f"Incorrect Answers, Source",
            row="line 1 (header)",
        )
    items: list[QAItem] = []
    rownum = 0
    while True:
        try:
            record = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise DatasetFormatError(
                path, f"malformed CSV ({exc})", row=f"row {rownum + 1} (line {reader.line_num})"
            ) from None
        rownum += 1
        row = f"row {rownum} (ending on line {reader.line_num})"
        if None in record:  # more fields than header columns
            raise DatasetFormatError(
                path,
                f"{len(stripped) + len(record[None])} fields but the header has "
                f"{len(stripped)} columns (an unquoted comma?)",
                row=row,
            )
        short = [c for c in _TQA_REQUIRED if record.get(c) is None]
        if short:
            raise DatasetFormatError(
                path, f"the row has fewer fields than the header ({short[0]!r} is absent)", row=row, column=short[0]
            )
        question = record["Question"].strip()
        if not question:
            raise DatasetFormatError(path, "empty question", row=row, column="Question")
        best = record["Best Answer"].strip()
        answers = _dedupe(([best] if best else []) + _split_answers(record["Correct Answers"]))
        if not answers:
            raise DatasetFormatError(
                path,
                "no gold answer: 'Best Answer' and 'Correct Answers' are both empty",
                row=row,
                column="Best Answer",
            )
        best_wrong = (record.get("Best Incorrect Answer") or "").strip()
        incorrect = _dedupe(([best_wrong] if best_wrong else []) + _split_answers(record["Incorrect Answers"]))
        meta = {
            key: record[col].strip()
            for key, col in (("type", "Type"), ("truthfulqa_category", "Category"), ("source", "Source"))
            if record.get(col)
        }
        note = "TruthfulQA" + (
            f" ({meta['type']}, {meta['truthfulqa_category']})"
            if "type" in meta and "truthfulqa_category" in meta
            else ""
        )
        try:
            items.append(
                QAItem(
                    id=f"truthfulqa-{rownum:04d}",
                    category=category,
                    question=question,
                    answers=answers,
                    incorrect=incorrect,
                    note=note,
                    source="truthfulqa",
                    meta=meta,
                )
            )
        except ValueError as exc:
            raise DatasetFormatError(path, str(exc), row=row) from None
    return items


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


# --------------------------------------------------------------------------------------------------------------
# StrategyQA (JSON)
# --------------------------------------------------------------------------------------------------------------


def load_strategyqa_json(path: str | os.PathLike[str], *, category: str = "yes_no_multistep") -> list[QAItem]:
    """Read a StrategyQA JSON file you downloaded (``strategyqa_train.json`` from github.com/eladsegal/strategyqa).

    The file is a JSON list of objects with ``qid``, ``term``, ``description``, ``question``, ``answer`` (a JSON
    boolean), ``facts`` (list of strings), ``decomposition`` (list of sub-questions) and ``evidence`` (ignored).
    Gold answers become ``["yes", "true"]`` or ``["no", "false"]`` with the opposite as ``incorrect``; ``term`` and
    ``description`` go to ``meta``. The published test split has no answers and cannot be loaded as gold.
    """
    text = _read_text(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetFormatError(
            path, f"not valid JSON ({exc.msg})", row=f"line {exc.lineno}, column {exc.colno}"
        ) from None
    if not isinstance(data, list):
        raise DatasetFormatError(
            path, f"expected a JSON list of question objects at the top level, got a {type(data).__name__}"
        )
    items: list[QAItem] = []
    seen: dict[str, int] = {}
    for index, entry in enumerate(data):
        row = f"entry {index}"
        if not isinstance(entry, dict):
            raise DatasetFormatError(path, f"expected a JSON object, got {type(entry).__name__}", row=row)
        qid = entry.get("qid")
        if not isinstance(qid, str | int) or isinstance(qid, bool) or not str(qid).strip():
            raise DatasetFormatError(path, f"qid must be a non-empty string, got {qid!r}", row=row, column="qid")
        qid = str(qid).strip()
        row = f"entry {index} (qid {qid!r})"
        if qid in seen:
            raise DatasetFormatError(path, f"duplicate qid (first at entry {seen[qid]})", row=row, column="qid")
        seen[qid] = index
        question = entry.get("question")
        if not isinstance(question, str) or not question.strip():
            raise DatasetFormatError(
                path, f"question must be a non-empty string, got {question!r}", row=row, column="question"
            )
        if "answer" not in entry:
            raise DatasetFormatError(
                path,
                "no 'answer' (StrategyQA's test split ships without answers; load the train split)",
                row=row,
                column="answer",
            )
        answer = entry["answer"]
        if not isinstance(answer, bool):
            raise DatasetFormatError(
                path,
                f"answer must be JSON true or false, got {answer!r} ({type(answer).__name__})",
                row=row,
                column="answer",
            )
        lists = {}
        for name in ("facts", "decomposition"):
            value = entry.get(name, [])
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise DatasetFormatError(path, f"{name} must be a list of strings, got {value!r}", row=row, column=name)
            lists[name] = [v.strip() for v in value if v.strip()]
        meta = {k: entry[k] for k in ("term", "description") if isinstance(entry.get(k), str) and entry[k]}
        note = f"StrategyQA term: {meta['term']}" if "term" in meta else "StrategyQA"
        items.append(
            QAItem(
                id=f"strategyqa-{qid}",
                category=category,
                question=question.strip(),
                answers=YES_ALIASES if answer else NO_ALIASES,
                incorrect=NO_ALIASES if answer else YES_ALIASES,
                note=note,
                decomposition=lists["decomposition"],
                facts=lists["facts"],
                source="strategyqa",
                meta=meta,
            )
        )
    return items


# --------------------------------------------------------------------------------------------------------------


def _read_text(path: str | os.PathLike[str], *, encoding: str = "utf-8") -> str:
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{p}: no such file (the loaders read files already on disk; nothing is downloaded)")
    if p.is_dir():
        raise IsADirectoryError(f"{p}: is a folder; pass the data file itself")
    try:
        return p.read_text(encoding=encoding)
    except UnicodeDecodeError as exc:
        raise DatasetFormatError(p, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
