"""Multi-hop search data: the :class:`Document` and :class:`SearchQuestion` every search loader returns, and the
synthetic corpus the package ships (MuSiQue / HotpotQA files are read by :mod:`.multihop`).

A :class:`SearchQuestion` holds the question, its gold answer and aliases, how many hops it needs, which documents
support it and which only look as if they do. Nothing here touches the network.

- :func:`load_search_corpus`, :func:`load_search_questions`, :func:`load_search_dataset` — the synthetic corpus
  (≈300 documents about an invented world, ≈100 questions of 2–4 hops), written by
  ``uncertainty_lab/datasets/build_search_corpus.py``; data card ``datasets/data/search_corpus.md``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from uncertainty_lab.datasets.files import (
    DEFAULT_MAX_BYTES,
    PACKAGE_SOURCE,
    DatasetFormatError,
    UniqueIds,
    json_kind,
    json_records,
    provenance,
    record_from,
    shipped_or_file,
)
from uncertainty_lab.datasets.subset import check_subset, take

__all__ = [
    "Document",
    "SearchDataFormatError",
    "SearchQuestion",
    "SubQuestion",
    "load_search_corpus",
    "load_search_dataset",
    "load_search_questions",
    "search_corpus_resource",
    "search_questions_resource",
]

_DATA_PACKAGE = "uncertainty_lab.datasets"
_CORPUS_FILE = "data/search_corpus.jsonl"
_QUESTIONS_FILE = "data/search_questions.jsonl"


class SearchDataFormatError(DatasetFormatError):
    """A search data file is not in the format its loader expects; names the file, the record and the field.

    A :class:`~uncertainty_lab.datasets.files.DatasetFormatError` (so a ``ValueError``); ``record`` and ``field``
    are also on the exception as attributes.
    """

    _column_word = "field"

    def __init__(self, path: str | os.PathLike[str], message: str, *, record: str | None = None,
                 field: str | None = None, row: str | None = None, column: str | None = None):
        super().__init__(path, message, row=record if record is not None else row,
                         column=field if field is not None else column)

    @property
    def record(self) -> str | None:
        """Which record (``line N`` / ``record N``, with its id when known)."""
        return self.row

    @property
    def field(self) -> str | None:
        """Which field of the record."""
        return self.column


# --------------------------------------------------------------------------------------------------------------
# The dataclasses
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Document:
    """One passage of a search corpus. ``id`` is stable: search results, belief states and gates refer to it."""

    id: str
    title: str
    text: str

    def __post_init__(self) -> None:
        for name in ("id", "title", "text"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"Document.{name} must be a string, got {type(getattr(self, name)).__name__}")
        if not self.id:
            raise ValueError("Document.id must not be empty")

    def to_dict(self) -> dict[str, str]:
        """``{"id", "title", "text"}``; :meth:`from_dict` reads it back."""
        return {"id": self.id, "title": self.title, "text": self.text}

    @classmethod
    def from_dict(cls, record: Mapping[str, Any]) -> Document:
        """A document from ``{"id", "title", "text"}`` (all strings); other keys are an error."""
        if not isinstance(record, Mapping):
            raise TypeError(f"a document must be a JSON object, got {type(record).__name__}")
        missing = [k for k in ("id", "title", "text") if k not in record]
        if missing:
            raise ValueError(f"missing field {missing[0]!r}")
        unknown = sorted(set(record) - {"id", "title", "text"})
        if unknown:
            raise ValueError(f"unknown field {unknown[0]!r}; a document has id, title, text")
        return cls(record["id"], record["title"], record["text"])


@dataclass(frozen=True)
class SubQuestion:
    """One hop of a question's decomposition (MuSiQue style: ``#k`` stands for the answer of hop k).

    ``support_id`` is the document that states this hop's fact, or ``None`` when the source does not say.
    """

    question: str
    answer: str
    support_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{"question", "answer", "support_id"}``; :meth:`from_dict` reads it back."""
        return {"question": self.question, "answer": self.answer, "support_id": self.support_id}

    @classmethod
    def from_dict(cls, step: Any, k: int = 0) -> SubQuestion:
        """Hop ``k`` of a decomposition from its dict; a ``TypeError`` names ``decomposition[k]`` when it is wrong."""
        if not isinstance(step, Mapping) or not isinstance(step.get("question"), str) \
                or not isinstance(step.get("answer"), str) or not isinstance(step.get("support_id"), str | None):
            raise TypeError(f"decomposition[{k}] must be an object with string question, answer, support_id")
        return cls(step["question"], step["answer"], step.get("support_id"))


@dataclass(frozen=True)
class SearchQuestion:
    """A multi-hop question with its gold answer and the documents that support it.

    ``aliases`` are other accepted forms of ``answer``; :attr:`answers` gives both, canonical first.
    ``supporting_ids`` are in reasoning order where the source gives one (the shipped set and MuSiQue): for the
    shipped set the last one states the answer. ``distractor_ids`` look relevant and are not. ``type`` is
    ``"bridge"`` or ``"comparison"`` (MuSiQue questions are all compositional chains: ``"bridge"``; HotpotQA
    keeps its own label). ``answerable`` is ``False`` only for MuSiQue-Full's unanswerable contrast questions.
    ``source`` says where it came from; ``meta`` keeps the source record's other fields.
    """

    id: str
    question: str
    answer: str
    aliases: tuple[str, ...] = ()
    hops: int = 0
    type: str = "bridge"
    supporting_ids: tuple[str, ...] = ()
    distractor_ids: tuple[str, ...] = ()
    decomposition: tuple[SubQuestion, ...] = ()
    answerable: bool = True
    source: str = PACKAGE_SOURCE
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False, repr=False)

    def __post_init__(self) -> None:
        for name in ("id", "question", "answer", "type", "source"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"{name} must be a string, got {type(getattr(self, name)).__name__}")
        for name in ("id", "question"):
            if not getattr(self, name).strip():
                raise ValueError(f"{name} must not be empty")
        if isinstance(self.hops, bool) or not isinstance(self.hops, int) or self.hops < 0:
            raise ValueError(f"hops must be a non-negative integer, got {self.hops!r}")
        if not isinstance(self.answerable, bool):
            raise TypeError(f"answerable must be true or false, got {self.answerable!r}")
        for name in ("aliases", "supporting_ids", "distractor_ids"):
            value = getattr(self, name)
            if isinstance(value, str) or not isinstance(value, Iterable):
                raise TypeError(f"{name} must be a list of strings, got {type(value).__name__}")
            value = tuple(value)
            bad = [v for v in value if not isinstance(v, str)]
            if bad:
                raise TypeError(f"{name} must hold strings, got {bad[0]!r}")
            object.__setattr__(self, name, value)
        overlap = sorted(set(self.supporting_ids) & set(self.distractor_ids))
        if overlap:
            raise ValueError(f"document {overlap[0]!r} is both supporting and a distractor")
        decomposition = tuple(self.decomposition)
        for step in decomposition:
            if not isinstance(step, SubQuestion):
                raise TypeError(f"decomposition must hold SubQuestion items, got {type(step).__name__}")
        object.__setattr__(self, "decomposition", decomposition)

    @property
    def answers(self) -> tuple[str, ...]:
        """The gold answer and its aliases, canonical first, without repeats."""
        return tuple(dict.fromkeys((self.answer, *self.aliases)))

    def to_dict(self) -> dict[str, Any]:
        """Every field as a JSON-ready dict in the shipped schema; ``answerable``, ``source`` and ``meta`` only when
        they differ from the defaults (so the shipped file is unchanged and unanswerable questions round-trip)."""
        out = {
            "id": self.id, "question": self.question, "answer": self.answer, "aliases": list(self.aliases),
            "hops": self.hops, "type": self.type, "supporting_ids": list(self.supporting_ids),
            "distractor_ids": list(self.distractor_ids),
            "decomposition": [s.to_dict() for s in self.decomposition],
        }
        if not self.answerable:
            out["answerable"] = False
        return {**out, **provenance(self.source, self.meta)}

    @classmethod
    def from_dict(cls, record: Mapping[str, Any], *, source: str = PACKAGE_SOURCE) -> SearchQuestion:
        """Read one record of the shipped schema (its ``source`` wins over the keyword, the default for records
        without one); ``TypeError``/``ValueError`` name the field that is wrong."""
        if not isinstance(record, Mapping):
            raise TypeError(f"a question record must be a JSON object, got {type(record).__name__}")
        missing = [k for k in ("id", "question", "answer", "hops", "supporting_ids") if k not in record]
        if missing:
            raise ValueError(f"missing field {missing[0]!r}")
        steps = record.get("decomposition", [])
        if not isinstance(steps, list):
            raise TypeError(f"decomposition must be a list, got {type(steps).__name__}")
        meta = record.get("meta", {})
        if not isinstance(meta, Mapping):
            raise TypeError(f"meta must be a JSON object, got {type(meta).__name__}")
        return cls(
            id=record["id"], question=record["question"], answer=record["answer"],
            aliases=record.get("aliases", ()), hops=record["hops"], type=record.get("type", "bridge"),
            supporting_ids=record["supporting_ids"], distractor_ids=record.get("distractor_ids", ()),
            decomposition=tuple(SubQuestion.from_dict(step, k) for k, step in enumerate(steps)),
            answerable=record.get("answerable", True), source=record.get("source", source), meta=dict(meta),
        )


# --------------------------------------------------------------------------------------------------------------
# The shipped corpus
# --------------------------------------------------------------------------------------------------------------


def search_corpus_resource():
    """The shipped corpus JSONL as an ``importlib.resources`` traversable (wheel or editable install)."""
    return resources.files(_DATA_PACKAGE).joinpath(_CORPUS_FILE)


def search_questions_resource():
    """The shipped questions JSONL as an ``importlib.resources`` traversable."""
    return resources.files(_DATA_PACKAGE).joinpath(_QUESTIONS_FILE)


def load_search_corpus(
    path: str | os.PathLike[str] | None = None, *, max_bytes: int | None = DEFAULT_MAX_BYTES
) -> list[Document]:
    """The documents of the shipped synthetic corpus (``path=None``), or of a file in the same schema.

    JSON lines (one object a line) or a JSON list of objects with string ``id``, ``title``, ``text``; ids must be
    unique.
    """
    where, text = shipped_or_file(path, search_corpus_resource(), max_bytes=max_bytes, error=SearchDataFormatError)
    documents: list[Document] = []
    ids = UniqueIds(where, error=SearchDataFormatError)
    for rec, record in json_records(text, where, what="documents", record_keys=("id", "text"),
                                    error=SearchDataFormatError):
        if not isinstance(record, dict):
            raise SearchDataFormatError(where, f"expected a JSON object, got {json_kind(record)}", record=rec)
        for name in ("id", "title", "text"):
            if name not in record:
                raise SearchDataFormatError(where, "missing", record=rec, field=name)
            if not isinstance(record[name], str):
                raise SearchDataFormatError(where, f"must be a string, got {json_kind(record[name])}", record=rec,
                                            field=name)
        if not record["id"]:
            raise SearchDataFormatError(where, "must not be empty", record=rec, field="id")
        ids.add(record["id"], rec)
        documents.append(Document(record["id"], record["title"], record["text"]))
    if not documents:
        raise SearchDataFormatError(where, "no documents in the file")
    return documents


def load_search_questions(
    path: str | os.PathLike[str] | None = None,
    *,
    documents: Sequence[Document] | None = None,
    limit: int | None = None,
    sample: int | None = None,
    seed: int = 0,
    max_bytes: int | None = DEFAULT_MAX_BYTES,
) -> list[SearchQuestion]:
    """The questions of the shipped synthetic corpus (``path=None``), or of a file in the same schema (JSON lines
    or a JSON list); then ``sample`` / ``limit``.

    Checks that ids are unique and that every supporting, distractor and decomposition document id exists in
    ``documents`` — by default the shipped corpus when ``path`` is ``None``; for your own file pass its documents
    (without them only the file's own consistency is checked).
    """
    check_subset(limit, sample, seed)
    where, text = shipped_or_file(path, search_questions_resource(), max_bytes=max_bytes, error=SearchDataFormatError)
    if documents is None and path is None:
        documents = load_search_corpus()
    known = None if documents is None else {d.id for d in documents}
    questions: list[SearchQuestion] = []
    ids = UniqueIds(where, error=SearchDataFormatError)
    for rec, record in json_records(text, where, what="questions", record_keys=("id", "question"),
                                    error=SearchDataFormatError):
        label = rec
        if isinstance(record, dict) and isinstance(record.get("id"), str):
            rec += f" (id {record['id']!r})"
        q = record_from(SearchQuestion.from_dict, record, where, rec, field_of=_field_named_in,
                        error=SearchDataFormatError)
        ids.add(q.id, rec, first=label)
        _check_question(q, known, where, rec)
        questions.append(q)
    return take(questions, limit=limit, sample=sample, seed=seed)


def _check_question(q: SearchQuestion, known: set[str] | None, where: str, rec: str) -> None:
    """Hops match the supporting documents, and every document the question names is in the corpus."""
    if q.answerable and q.hops != len(q.supporting_ids):
        raise SearchDataFormatError(where, f"{q.hops} hops but {len(q.supporting_ids)} supporting ids", record=rec,
                                    field="hops")
    if known is None:
        return
    refs = [("supporting_ids", i) for i in q.supporting_ids] + [("distractor_ids", i) for i in q.distractor_ids]
    refs += [("decomposition", s.support_id) for s in q.decomposition if s.support_id is not None]
    for name, doc_id in refs:
        if doc_id not in known:
            raise SearchDataFormatError(where, f"document {doc_id!r} is not in the corpus", record=rec, field=name)


def load_search_dataset(
    corpus_path: str | os.PathLike[str] | None = None,
    questions_path: str | os.PathLike[str] | None = None,
    *,
    limit: int | None = None,
    sample: int | None = None,
    seed: int = 0,
    max_bytes: int | None = DEFAULT_MAX_BYTES,
) -> tuple[list[Document], list[SearchQuestion]]:
    """``(documents, questions)``: the shipped synthetic corpus by default, or a pair of files in its schema.

    ``corpus_path`` may be a folder holding ``search_corpus.jsonl`` and ``search_questions.jsonl`` (as the build
    script writes them). ``sample`` / ``limit`` choose questions; the corpus stays whole (it is what is searched).
    """
    if corpus_path is not None and Path(corpus_path).is_dir():
        folder = Path(corpus_path)
        corpus_path = folder / Path(_CORPUS_FILE).name
        questions_path = folder / Path(_QUESTIONS_FILE).name if questions_path is None else questions_path
    documents = load_search_corpus(corpus_path, max_bytes=max_bytes)
    return documents, load_search_questions(questions_path, documents=documents, limit=limit, sample=sample,
                                            seed=seed, max_bytes=max_bytes)


def _field_named_in(message: str) -> str | None:
    """The field a dataclass validation message names (messages start with it or quote it)."""
    if message.startswith("missing field "):
        return message.split("'")[1]
    head = message.split(" ", 1)[0].split("[", 1)[0]
    if head in ("id", "question", "answer", "aliases", "hops", "type", "supporting_ids", "distractor_ids",
                "decomposition", "answerable", "meta"):
        return head
    return None
