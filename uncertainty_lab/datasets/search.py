"""Multi-hop search data: the synthetic corpus the package ships, and loaders for MuSiQue / HotpotQA files you bring.

Everything comes back as :class:`Document` (``id``, ``title``, ``text``) and :class:`SearchQuestion` (the question,
its gold answer and aliases, how many hops it needs, which documents support it and which only look as if they
do). Nothing here touches the network: the shipped corpus is package data, and the MuSiQue / HotpotQA loaders
read files already on your disk.

- :func:`load_search_corpus`, :func:`load_search_questions`, :func:`load_search_dataset` — the synthetic corpus
  (≈300 documents about an invented world, ≈100 questions of 2–4 hops), written by
  ``uncertainty_lab/datasets/build_search_corpus.py``; data card ``datasets/data/search_corpus.md``.
- :func:`load_musique_json` — a MuSiQue file (``musique_ans_v1.0_dev.jsonl``, ``musique_full_v1.0_dev.jsonl``…).
- :func:`load_hotpotqa_json` — a HotpotQA file (``hotpot_dev_distractor_v1.json``, ``hotpot_train_v1.1.json``…).

Real-data loaders give each distinct paragraph one document, with a stable id derived from its title and text
(``musique-<hash>``, ``hotpotqa-<hash>``), so a paragraph shared by several questions is one document and ids do
not depend on which subset of the file you load. A question's ``distractor_ids`` are its non-supporting context
paragraphs.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from uncertainty_lab.datasets.qa import DatasetFormatError

__all__ = [
    "Document",
    "SearchDataFormatError",
    "SearchQuestion",
    "SubQuestion",
    "load_hotpotqa_json",
    "load_musique_json",
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

    A :class:`~uncertainty_lab.datasets.qa.DatasetFormatError` (so a ``ValueError``); ``record`` and ``field``
    are also on the exception as attributes.
    """

    def __init__(self, path: str | os.PathLike[str], message: str, *, record: str | None = None,
                 field: str | None = None):
        super().__init__(path, message, row=record, column=field)
        self.record = record
        self.field = field
        where = str(path)
        if record is not None:
            where += f", {record}"
        if field is not None:
            where += f", field {field!r}"
        self.args = (f"{where}: {message}",)


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
        return {"id": self.id, "title": self.title, "text": self.text}


@dataclass(frozen=True)
class SubQuestion:
    """One hop of a question's decomposition (MuSiQue style: ``#k`` stands for the answer of hop k).

    ``support_id`` is the document that states this hop's fact, or ``None`` when the source does not say.
    """

    question: str
    answer: str
    support_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"question": self.question, "answer": self.answer, "support_id": self.support_id}


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
    source: str = "uncertainty_lab"
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
        """The shipped JSONL schema (``source`` and ``meta`` are not written)."""
        return {
            "id": self.id, "question": self.question, "answer": self.answer, "aliases": list(self.aliases),
            "hops": self.hops, "type": self.type, "supporting_ids": list(self.supporting_ids),
            "distractor_ids": list(self.distractor_ids),
            "decomposition": [s.to_dict() for s in self.decomposition],
        }

    @classmethod
    def from_dict(cls, record: Mapping[str, Any], *, source: str = "uncertainty_lab") -> SearchQuestion:
        """Read one record of the shipped schema; ``TypeError``/``ValueError`` name the field that is wrong."""
        if not isinstance(record, Mapping):
            raise TypeError(f"a question record must be a JSON object, got {type(record).__name__}")
        missing = [k for k in ("id", "question", "answer", "hops", "supporting_ids") if k not in record]
        if missing:
            raise ValueError(f"missing field {missing[0]!r}")
        steps = record.get("decomposition", [])
        if not isinstance(steps, list):
            raise TypeError(f"decomposition must be a list, got {type(steps).__name__}")
        decomposition = []
        for k, step in enumerate(steps):
            if not isinstance(step, Mapping) or not isinstance(step.get("question"), str) \
                    or not isinstance(step.get("answer"), str) \
                    or not isinstance(step.get("support_id"), str | None):
                raise TypeError(f"decomposition[{k}] must be an object with string question, answer, support_id")
            decomposition.append(SubQuestion(step["question"], step["answer"], step.get("support_id")))
        return cls(
            id=record["id"], question=record["question"], answer=record["answer"],
            aliases=record.get("aliases", ()), hops=record["hops"], type=record.get("type", "bridge"),
            supporting_ids=record["supporting_ids"], distractor_ids=record.get("distractor_ids", ()),
            decomposition=tuple(decomposition), answerable=record.get("answerable", True), source=source,
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


def load_search_corpus(path: str | os.PathLike[str] | None = None) -> list[Document]:
    """The documents of the shipped synthetic corpus (``path=None``), or of a JSONL file in the same schema.

    One JSON object per line with string ``id``, ``title``, ``text``; ids must be unique.
    """
    where, text = _shipped_or_file(path, search_corpus_resource)
    documents: list[Document] = []
    seen: dict[str, int] = {}
    for lineno, record in _jsonl_records(text, where):
        rec = f"line {lineno}"
        if not isinstance(record, dict):
            raise SearchDataFormatError(where, f"expected a JSON object, got {_kind(record)}", record=rec)
        for name in ("id", "title", "text"):
            if name not in record:
                raise SearchDataFormatError(where, "missing", record=rec, field=name)
            if not isinstance(record[name], str):
                raise SearchDataFormatError(where, f"must be a string, got {_kind(record[name])}", record=rec,
                                            field=name)
        if not record["id"]:
            raise SearchDataFormatError(where, "must not be empty", record=rec, field="id")
        if record["id"] in seen:
            raise SearchDataFormatError(where, f"duplicate id {record['id']!r} (first on line {seen[record['id']]})",
                                        record=rec, field="id")
        seen[record["id"]] = lineno
        documents.append(Document(record["id"], record["title"], record["text"]))
    if not documents:
        raise SearchDataFormatError(where, "no documents in the file")
    return documents


def load_search_questions(path: str | os.PathLike[str] | None = None, *,
                          documents: Sequence[Document] | None = None) -> list[SearchQuestion]:
    """The questions of the shipped synthetic corpus (``path=None``), or of a JSONL file in the same schema.

    Checks that ids are unique and that every supporting, distractor and decomposition document id exists in
    ``documents`` — by default the shipped corpus when ``path`` is ``None``; for your own file pass its documents
    (without them only the file's own consistency is checked).
    """
    where, text = _shipped_or_file(path, search_questions_resource)
    if documents is None and path is None:
        documents = load_search_corpus()
    known = None if documents is None else {d.id for d in documents}
    questions: list[SearchQuestion] = []
    seen: dict[str, int] = {}
    for lineno, record in _jsonl_records(text, where):
        rec = f"line {lineno}"
        if isinstance(record, dict) and isinstance(record.get("id"), str):
            rec += f" (id {record['id']!r})"
        try:
            q = SearchQuestion.from_dict(record)
        except (TypeError, ValueError) as exc:
            raise SearchDataFormatError(where, str(exc), record=rec, field=_field_named_in(str(exc))) from None
        if q.id in seen:
            raise SearchDataFormatError(where, f"duplicate id {q.id!r} (first on line {seen[q.id]})", record=rec,
                                        field="id")
        seen[q.id] = lineno
        if q.answerable and q.hops != len(q.supporting_ids):
            raise SearchDataFormatError(where, f"{q.hops} hops but {len(q.supporting_ids)} supporting ids",
                                        record=rec, field="hops")
        if known is not None:
            refs = [("supporting_ids", i) for i in q.supporting_ids] + [("distractor_ids", i) for i in q.distractor_ids]
            refs += [("decomposition", s.support_id) for s in q.decomposition if s.support_id is not None]
            for name, doc_id in refs:
                if doc_id not in known:
                    raise SearchDataFormatError(where, f"document {doc_id!r} is not in the corpus", record=rec,
                                                field=name)
        questions.append(q)
    return questions


def load_search_dataset(corpus_path: str | os.PathLike[str] | None = None,
                        questions_path: str | os.PathLike[str] | None = None
                        ) -> tuple[list[Document], list[SearchQuestion]]:
    """``(documents, questions)``: the shipped synthetic corpus by default, or a pair of files in its schema."""
    documents = load_search_corpus(corpus_path)
    return documents, load_search_questions(questions_path, documents=documents)


# --------------------------------------------------------------------------------------------------------------
# MuSiQue
# --------------------------------------------------------------------------------------------------------------


def load_musique_json(path: str | os.PathLike[str]) -> tuple[list[Document], list[SearchQuestion]]:
    """Read a MuSiQue file you downloaded (JSONL as distributed, or a JSON list of the same objects).

    Each record has ``id``, ``question``, ``answer``, ``paragraphs`` (``idx``, ``title``, ``paragraph_text``,
    ``is_supporting``) and, in the answerable and full sets, ``question_decomposition`` (``question``,
    ``answer``, ``paragraph_support_idx``), ``answer_aliases`` and ``answerable``. Returns ``(documents,
    questions)``: documents deduplicated across questions by title and text; ``supporting_ids`` in the
    decomposition's order; ``hops`` = number of decomposition steps (else supporting paragraphs); ``type`` is
    ``"bridge"`` (the reasoning-graph shape, e.g. ``3hop1``, is the prefix of the id). Files without answers (the
    test split) are refused.
    """
    where = str(path)
    documents: dict[str, Document] = {}
    questions: list[SearchQuestion] = []
    seen: dict[str, str] = {}
    for rec, record in _json_records(_read_text(path), where):
        if not isinstance(record, dict):
            raise SearchDataFormatError(where, f"expected a JSON object, got {_kind(record)}", record=rec)
        if isinstance(record.get("id"), str):
            rec += f" (id {record['id']!r})"
        qid = _require(record, "id", str, where, rec)
        question = _require(record, "question", str, where, rec)
        if "answer" not in record:
            raise SearchDataFormatError(where, "missing (a split without answers, like MuSiQue's test set, cannot "
                                        "be scored)", record=rec, field="answer")
        answer = _require(record, "answer", str, where, rec)
        aliases = record.get("answer_aliases", [])
        if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
            raise SearchDataFormatError(where, "must be a list of strings", record=rec, field="answer_aliases")
        answerable = record.get("answerable", True)
        if not isinstance(answerable, bool):
            raise SearchDataFormatError(where, f"must be true or false, got {_kind(answerable)}", record=rec,
                                        field="answerable")
        paragraphs = _require(record, "paragraphs", list, where, rec)
        if not paragraphs:
            raise SearchDataFormatError(where, "has no paragraphs", record=rec, field="paragraphs")
        by_idx: dict[int, str] = {}
        supporting: list[str] = []
        for k, para in enumerate(paragraphs):
            fname = f"paragraphs[{k}]"
            if not isinstance(para, dict):
                raise SearchDataFormatError(where, f"expected an object, got {_kind(para)}", record=rec, field=fname)
            idx = _require(para, "idx", int, where, rec, prefix=fname)
            title = _require(para, "title", str, where, rec, prefix=fname)
            text = _require(para, "paragraph_text", str, where, rec, prefix=fname)
            is_supporting = para.get("is_supporting", False)
            if not isinstance(is_supporting, bool):
                raise SearchDataFormatError(where, f"must be true or false, got {_kind(is_supporting)}", record=rec,
                                            field=f"{fname}.is_supporting")
            if idx in by_idx:
                raise SearchDataFormatError(where, f"duplicate paragraph idx {idx}", record=rec, field=f"{fname}.idx")
            doc = _document("musique", title, text, documents)
            by_idx[idx] = doc.id
            if is_supporting and doc.id not in supporting:
                supporting.append(doc.id)
        steps = record.get("question_decomposition", [])
        if not isinstance(steps, list):
            raise SearchDataFormatError(where, f"must be a list, got {_kind(steps)}", record=rec,
                                        field="question_decomposition")
        decomposition: list[SubQuestion] = []
        for k, step in enumerate(steps):
            fname = f"question_decomposition[{k}]"
            if not isinstance(step, dict):
                raise SearchDataFormatError(where, f"expected an object, got {_kind(step)}", record=rec, field=fname)
            sub_q = _require(step, "question", str, where, rec, prefix=fname)
            sub_a = _require(step, "answer", str, where, rec, prefix=fname)
            support = step.get("paragraph_support_idx")
            if support is not None and (isinstance(support, bool) or not isinstance(support, int)):
                raise SearchDataFormatError(where, f"must be an integer or null, got {_kind(support)}", record=rec,
                                            field=f"{fname}.paragraph_support_idx")
            if support is not None and support not in by_idx and answerable:
                raise SearchDataFormatError(where, f"refers to paragraph idx {support}, which the record does not "
                                            "have", record=rec, field=f"{fname}.paragraph_support_idx")
            decomposition.append(SubQuestion(sub_q, sub_a, by_idx.get(support) if support is not None else None))
        # reasoning order from the decomposition, then any other supporting paragraph in paragraph order
        ordered = list(dict.fromkeys(s.support_id for s in decomposition if s.support_id in supporting))
        ordered += [d for d in supporting if d not in ordered]
        distractors = list(dict.fromkeys(d for d in by_idx.values() if d not in supporting))
        if qid in seen:
            raise SearchDataFormatError(where, f"duplicate id {qid!r} (first at {seen[qid]})", record=rec, field="id")
        seen[qid] = rec
        extra = {k: v for k, v in record.items() if k not in
                 ("id", "question", "answer", "answer_aliases", "answerable", "paragraphs", "question_decomposition")}
        questions.append(SearchQuestion(
            id=qid, question=question, answer=answer, aliases=tuple(a for a in aliases if a != answer),
            hops=len(decomposition) or len(ordered), type="bridge", supporting_ids=tuple(ordered),
            distractor_ids=tuple(distractors), decomposition=tuple(decomposition), answerable=answerable,
            source="musique", meta=extra))
    return list(documents.values()), questions


# --------------------------------------------------------------------------------------------------------------
# HotpotQA
# --------------------------------------------------------------------------------------------------------------


def load_hotpotqa_json(path: str | os.PathLike[str], *, missing_support: str = "error"
                       ) -> tuple[list[Document], list[SearchQuestion]]:
    """Read a HotpotQA file you downloaded: a JSON list of ``{_id, question, answer, supporting_facts, context,
    type, level}`` (JSONL of the same objects is accepted too).

    ``context`` is ``[[title, [sentence, …]], …]``; a document's text is its sentences joined as published (they
    carry their own leading spaces). ``supporting_facts`` is ``[[title, sentence_index], …]``: the supporting
    documents are the context paragraphs with those titles, in first-mention order; sentence indices are not
    checked against the paragraph (a few published records point past the end). ``hops`` is the number of
    supporting documents, ``type`` the record's ``bridge``/``comparison``, ``level`` goes to ``meta``.

    ``missing_support``: what to do when a supporting title is not in the record's context — ``"error"``
    (default; in the distractor setting it never happens) or ``"drop"`` (the fullwiki setting's retrieved context
    may lack gold paragraphs; the title is then kept in ``meta["missing_support"]``).
    """
    if missing_support not in ("error", "drop"):
        raise ValueError(f"missing_support must be 'error' or 'drop', got {missing_support!r}")
    where = str(path)
    documents: dict[str, Document] = {}
    questions: list[SearchQuestion] = []
    seen: dict[str, str] = {}
    for rec, record in _json_records(_read_text(path), where):
        if not isinstance(record, dict):
            raise SearchDataFormatError(where, f"expected a JSON object, got {_kind(record)}", record=rec)
        if isinstance(record.get("_id"), str):
            rec += f" (_id {record['_id']!r})"
        qid = _require(record, "_id", str, where, rec)
        question = _require(record, "question", str, where, rec)
        if "answer" not in record:
            raise SearchDataFormatError(where, "missing (a split without answers, like HotpotQA's test set, cannot "
                                        "be scored)", record=rec, field="answer")
        answer = _require(record, "answer", str, where, rec)
        qtype = record.get("type", "bridge")
        if not isinstance(qtype, str):
            raise SearchDataFormatError(where, f"must be a string, got {_kind(qtype)}", record=rec, field="type")
        context = _require(record, "context", list, where, rec)
        if not context:
            raise SearchDataFormatError(where, "has no paragraphs", record=rec, field="context")
        by_title: dict[str, str] = {}
        for k, entry in enumerate(context):
            fname = f"context[{k}]"
            if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str)
                    and isinstance(entry[1], list) and all(isinstance(s, str) for s in entry[1])):
                raise SearchDataFormatError(where, "expected [title, [sentence, ...]]", record=rec, field=fname)
            title, sentences = entry
            doc = _document("hotpotqa", title, "".join(sentences).strip(), documents)
            by_title.setdefault(title, doc.id)
        facts = _require(record, "supporting_facts", list, where, rec)
        supporting: list[str] = []
        missing: list[str] = []
        for k, fact in enumerate(facts):
            fname = f"supporting_facts[{k}]"
            if not (isinstance(fact, list) and len(fact) == 2 and isinstance(fact[0], str)
                    and isinstance(fact[1], int) and not isinstance(fact[1], bool)):
                raise SearchDataFormatError(where, "expected [title, sentence_index]", record=rec, field=fname)
            title = fact[0]
            if title not in by_title:
                if missing_support == "error":
                    raise SearchDataFormatError(
                        where, f"title {title!r} is not in the record's context (for a fullwiki file, pass "
                        "missing_support='drop')", record=rec, field=fname)
                if title not in missing:
                    missing.append(title)
                continue
            if by_title[title] not in supporting:
                supporting.append(by_title[title])
        if qid in seen:
            raise SearchDataFormatError(where, f"duplicate _id {qid!r} (first at {seen[qid]})", record=rec,
                                        field="_id")
        seen[qid] = rec
        meta = {k: v for k, v in record.items()
                if k not in ("_id", "question", "answer", "type", "context", "supporting_facts")}
        if missing:
            meta["missing_support"] = missing
        distractors = list(dict.fromkeys(d for d in by_title.values() if d not in supporting))
        questions.append(SearchQuestion(
            id=qid, question=question, answer=answer, hops=len(supporting), type=qtype,
            supporting_ids=tuple(supporting), distractor_ids=tuple(distractors), source="hotpotqa", meta=meta))
    return list(documents.values()), questions


# --------------------------------------------------------------------------------------------------------------
# Reading helpers
# --------------------------------------------------------------------------------------------------------------


def _read_text(path: str | os.PathLike[str]) -> str:
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{p}: no such file (the loaders read files already on disk; nothing is downloaded)")
    if p.is_dir():
        raise IsADirectoryError(f"{p}: is a folder; pass the data file itself")
    try:
        return p.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SearchDataFormatError(p, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _shipped_or_file(path, resource) -> tuple[str, str]:
    if path is None:
        res = resource()
        return str(res), res.read_text(encoding="utf-8")
    return str(path), _read_text(path)


def _jsonl_records(text: str, where: str):
    """``(line number, parsed object)`` for each non-blank line."""
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield lineno, json.loads(line)
        except json.JSONDecodeError as exc:
            raise SearchDataFormatError(where, f"not valid JSON ({exc.msg} at character {exc.pos + 1})",
                                        record=f"line {lineno}") from None


def _json_records(text: str, where: str) -> list[tuple[str, Any]]:
    """A JSON list (``record N``), a single JSON object, or JSONL (``line N``) — whichever the file is."""
    stripped = text.lstrip()
    if not stripped:
        raise SearchDataFormatError(where, "the file is empty")
    if stripped.startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SearchDataFormatError(where, f"not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
                                        ) from None
        if not data:
            raise SearchDataFormatError(where, "the list of records is empty")
        return [(f"record {i}", r) for i, r in enumerate(data, start=1)]
    try:
        return [(f"line {n}", r) for n, r in _jsonl_records(text, where)]
    except SearchDataFormatError as jsonl_error:
        try:  # one pretty-printed object
            data = json.loads(text)
        except json.JSONDecodeError:
            raise jsonl_error from None  # report the JSONL error, which names the line
        return [("record 1", data)]


def _require(obj: dict, name: str, kind: type, where: str, rec: str, *, prefix: str | None = None):
    fname = f"{prefix}.{name}" if prefix else name
    if name not in obj:
        raise SearchDataFormatError(where, "missing", record=rec, field=fname)
    value = obj[name]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        expected = {str: "a string", int: "an integer", list: "a list"}[kind]
        raise SearchDataFormatError(where, f"must be {expected}, got {_kind(value)}", record=rec, field=fname)
    return value


def _document(prefix: str, title: str, text: str, documents: dict[str, Document]) -> Document:
    """The document for (title, text), created once; its id hashes both, so it is stable across subsets."""
    digest = hashlib.sha1(f"{title}\n{text}".encode()).hexdigest()[:12]
    doc_id = f"{prefix}-{digest}"
    if doc_id not in documents:
        documents[doc_id] = Document(doc_id, title, text)
    return documents[doc_id]


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "true/false", int: "an integer",
            float: "a number", type(None): "null"}.get(type(value), type(value).__name__)


def _field_named_in(message: str) -> str | None:
    """The field a dataclass validation message names (messages start with it or quote it)."""
    if message.startswith("missing field "):
        return message.split("'")[1]
    head = message.split(" ", 1)[0].split("[", 1)[0]
    if head in ("id", "question", "answer", "aliases", "hops", "type", "supporting_ids", "distractor_ids",
                "decomposition", "answerable"):
        return head
    return None
