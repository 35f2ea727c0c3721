"""Short-answer questions: the :class:`QAItem` every QA loader returns, the set the package ships, and files you
write in its schema (TruthfulQA and StrategyQA files are read by :mod:`.truthfulqa` and :mod:`.strategyqa`).

An item's ``answers`` are gold aliases (the first is the canonical answer); correctness scoring normalises them
with :func:`uncertainty_lab.semantic.text.normalise_answer`. Nothing here touches the network.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from uncertainty_lab.datasets.files import (
    DEFAULT_MAX_BYTES,
    PACKAGE_SOURCE,
    DatasetFormatError,
    UniqueIds,
    json_records,
    provenance,
    record_from,
    shipped_or_file,
)
from uncertainty_lab.datasets.subset import check_subset, take

__all__ = [
    "BEHAVIOURS",
    "CATEGORIES",
    "NO_ALIASES",
    "YES_ALIASES",
    "DatasetFormatError",
    "QAItem",
    "load_qa_jsonl",
    "load_qa_questions",
    "qa_questions_resource",
]

#: Categories of the shipped question set, in file order.
CATEGORIES: tuple[str, ...] = ("factual", "ambiguous", "false_premise", "yes_no_multistep", "decline")

#: What a careful assistant should do with an item: answer it, or decline / redirect it.
BEHAVIOURS: tuple[str, ...] = ("answer", "decline")

#: Gold aliases used for yes/no items read from StrategyQA files (the shipped set uses the same ones).
YES_ALIASES: tuple[str, ...] = ("yes", "true")
NO_ALIASES: tuple[str, ...] = ("no", "false")

_DATA_PACKAGE = "uncertainty_lab.datasets"
_SHIPPED_FILE = "data/qa_questions.jsonl"

# The file schema, in the order the fields are written (``source`` and ``meta`` only when they are not the defaults).
_FIELDS = ("id", "category", "question", "answers", "incorrect", "note", "decomposition", "facts", "behaviour")
_EXTRA = ("source", "meta")
_REQUIRED = ("id", "category", "question", "answers")


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
    source: str = PACKAGE_SOURCE
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
        if not isinstance(self.source, str) or not self.source.strip():
            raise ValueError(f"source must be a non-empty string, got {self.source!r}")
        if not isinstance(self.meta, Mapping):
            raise ValueError(f"meta must be a JSON object (a dict), got {type(self.meta).__name__}")

    @property
    def canonical(self) -> str:
        """The canonical gold answer (the first alias)."""
        return self.answers[0]

    @property
    def expects_refusal(self) -> bool:
        """True when a careful assistant should decline or redirect rather than answer."""
        return self.behaviour == "decline"

    def to_dict(self) -> dict[str, Any]:
        """Every field as a JSON-ready dict in the file schema; ``source`` and ``meta`` only when they differ from
        the defaults, so the shipped file is unchanged and an item read from TruthfulQA round-trips whole."""
        out = {name: list(v) if isinstance(v := getattr(self, name), tuple) else v for name in _FIELDS}
        return {**out, **provenance(self.source, self.meta)}

    @classmethod
    def from_dict(cls, record: Mapping[str, Any], *, source: str = PACKAGE_SOURCE) -> QAItem:
        """Build an item from a dict in the file schema (``source`` there wins over the keyword, the default for
        records without one); unknown keys are an error (they are usually typos)."""
        if not isinstance(record, Mapping):
            raise ValueError(f"expected a JSON object, got {type(record).__name__}")
        missing = [k for k in _REQUIRED if k not in record]
        if missing:
            raise ValueError(f"missing field(s) {', '.join(missing)}")
        unknown = sorted(set(record) - set(_FIELDS) - set(_EXTRA))
        if unknown:
            raise ValueError(f"unknown field(s) {', '.join(unknown)}; the schema has {', '.join(_FIELDS + _EXTRA)}")
        values = {k: record[k] for k in _FIELDS + _EXTRA if k in record}
        values.setdefault("source", source)
        return cls(**values)


# --------------------------------------------------------------------------------------------------------------
# The shipped set and files in its schema
# --------------------------------------------------------------------------------------------------------------


def qa_questions_resource():
    """The shipped JSONL as an ``importlib.resources`` traversable (works from a wheel or an editable install)."""
    return resources.files(_DATA_PACKAGE).joinpath(_SHIPPED_FILE)


def load_qa_jsonl(
    path: str | os.PathLike[str] | None = None,
    *,
    categories: str | Iterable[str] | None = None,
    known_categories: Iterable[str] | None = None,
    source: str = PACKAGE_SOURCE,
    limit: int | None = None,
    sample: int | None = None,
    seed: int = 0,
    max_bytes: int | None = DEFAULT_MAX_BYTES,
) -> list[QAItem]:
    """Read a question file in the shipped schema (your own set; ``path=None``: the shipped one).

    JSON lines (one object a line) or a JSON list of objects with ``id``, ``category``, ``question``, ``answers``
    and optionally ``incorrect``, ``note``, ``decomposition``, ``facts``, ``behaviour``, ``source``, ``meta``.
    Ids must be unique. ``known_categories`` restricts the categories a file may use (the shipped set:
    :data:`CATEGORIES`); ``categories`` keeps only items in those; then ``sample`` / ``limit`` (see
    :func:`~uncertainty_lab.datasets.subset.take`).
    """
    check_subset(limit, sample, seed)
    where, text = shipped_or_file(path, qa_questions_resource(), max_bytes=max_bytes)
    if path is None and known_categories is None:
        known_categories = CATEGORIES
    items = _parse_records(text, where, categories=categories, known_categories=known_categories, source=source)
    return take(items, limit=limit, sample=sample, seed=seed)


def load_qa_questions(
    categories: str | Iterable[str] | None = None, *, limit: int | None = None, sample: int | None = None,
    seed: int = 0,
) -> list[QAItem]:
    """The question set the package ships: about 150 short-answer questions we wrote, 30 in each category.

    ``categories``: one name or several from :data:`CATEGORIES`; ``None`` loads all, in file order; then
    ``sample`` / ``limit``. See ``datasets/data/qa_questions.md`` (the data card) for how the set was written.
    """
    return load_qa_jsonl(None, categories=categories, limit=limit, sample=sample, seed=seed)


def _parse_records(text: str, where: str, *, categories, known_categories, source: str) -> list[QAItem]:
    wanted = _check_categories(categories, known_categories)
    known = None if known_categories is None else tuple(known_categories)
    items: list[QAItem] = []
    ids = UniqueIds(where)
    for row, record in json_records(text, where, what="question records", record_keys=_REQUIRED):
        item = record_from(lambda r: QAItem.from_dict(r, source=source), record, where, row)
        if known is not None and item.category not in known:
            raise DatasetFormatError(
                where, f"unknown category {item.category!r}; known: {', '.join(known)}", row=row, column="category"
            )
        ids.add(item.id, row)
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
            from ..untrusted import listing

            raise ValueError(f"categories: unknown {listing(unknown)}; choose from {listing(known, 20, quote=False)}")
    return wanted
