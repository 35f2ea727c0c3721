"""Real multi-hop QA files you downloaded — MuSiQue and HotpotQA — as :class:`~.search.Document` s and
:class:`~.search.SearchQuestion` s. Nothing here touches the network.

Each distinct paragraph becomes one document, with a stable id derived from its title and text (``musique-<hash>``,
``hotpotqa-<hash>``), so a paragraph shared by several questions is one document and ids do not depend on which
subset of the file you load. A question's ``distractor_ids`` are its non-supporting context paragraphs; the
documents returned are the paragraphs of the questions returned. Both loaders read a JSON list or JSON lines,
whichever the file holds.
"""

from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from uncertainty_lab.datasets.files import DEFAULT_MAX_BYTES, json_kind, json_records, read_text
from uncertainty_lab.datasets.search import Document, SearchDataFormatError, SearchQuestion, SubQuestion
from uncertainty_lab.datasets.subset import check_subset, split_file, take

__all__ = ["HOTPOTQA_SPLITS", "MUSIQUE_SPLITS", "load_hotpotqa_json", "load_musique_json"]

#: Which public file holds which MuSiQue split (answerable-only ``ans`` and ``full`` releases; test has no answers).
MUSIQUE_SPLITS: dict[str, tuple[str, ...]] = {
    split: (f"musique_ans_v1.0_{split}.jsonl", f"musique_full_v1.0_{split}.jsonl") for split in ("train", "dev", "test")
}

#: Which public file holds which HotpotQA split (the test split has no answers).
HOTPOTQA_SPLITS: dict[str, tuple[str, ...]] = {
    "train": ("hotpot_train_v1.1.json",),
    "dev_distractor": ("hotpot_dev_distractor_v1.json",),
    "dev_fullwiki": ("hotpot_dev_fullwiki_v1.json",),
    "test_fullwiki": ("hotpot_test_fullwiki_v1.json",),
}

_Docs = dict[str, Document]


def load_musique_json(
    path: str | os.PathLike[str],
    *,
    split: str | None = None,
    limit: int | None = None,
    sample: int | None = None,
    seed: int = 0,
    max_bytes: int | None = DEFAULT_MAX_BYTES,
) -> tuple[list[Document], list[SearchQuestion]]:
    """Read a MuSiQue file you downloaded (JSON lines as distributed, or a JSON list of the same objects).

    Each record has ``id``, ``question``, ``answer``, ``paragraphs`` (``idx``, ``title``, ``paragraph_text``,
    ``is_supporting``) and, in the answerable and full sets, ``question_decomposition`` (``question``,
    ``answer``, ``paragraph_support_idx``), ``answer_aliases`` and ``answerable``. Returns ``(documents,
    questions)``: documents deduplicated across questions by title and text; ``supporting_ids`` in the
    decomposition's order; ``hops`` = number of decomposition steps (else supporting paragraphs); ``type`` is
    ``"bridge"`` (the reasoning-graph shape, e.g. ``3hop1``, is the prefix of the id). ``split``
    (:data:`MUSIQUE_SPLITS`: ``train`` / ``dev`` / ``test`` in ``musique_{ans,full}_v1.0_<split>.jsonl``) picks the
    file in a folder and is checked against a file's name; files without answers (the test split) are refused.
    Then ``sample`` / ``limit`` choose questions.
    """
    check_subset(limit, sample, seed)
    path = split_file(path, split, MUSIQUE_SPLITS, "MuSiQue")
    documents, questions = _questions(path, "id", "MuSiQue questions", max_bytes, _musique_question)
    return _subset(documents, questions, limit, sample, seed)


def _musique_question(record: dict, rec: str, where: str, documents: _Docs) -> SearchQuestion:
    qid = _require(record, "id", str, where, rec)
    question = _require(record, "question", str, where, rec)
    answer = _answer(record, where, rec, "MuSiQue")
    aliases = record.get("answer_aliases", [])
    if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
        raise SearchDataFormatError(where, "must be a list of strings", record=rec, field="answer_aliases")
    answerable = record.get("answerable", True)
    if not isinstance(answerable, bool):
        raise SearchDataFormatError(where, f"must be true or false, got {json_kind(answerable)}", record=rec,
                                    field="answerable")
    by_idx, supporting = _musique_paragraphs(record, where, rec, documents)
    decomposition = _musique_steps(record, where, rec, by_idx, answerable)
    # reasoning order from the decomposition, then any other supporting paragraph in paragraph order
    ordered = list(dict.fromkeys(s.support_id for s in decomposition if s.support_id in supporting))
    ordered += [d for d in supporting if d not in ordered]
    distractors = list(dict.fromkeys(d for d in by_idx.values() if d not in supporting))
    extra = {k: v for k, v in record.items() if k not in
             ("id", "question", "answer", "answer_aliases", "answerable", "paragraphs", "question_decomposition")}
    return SearchQuestion(
        id=qid, question=question, answer=answer, aliases=tuple(a for a in aliases if a != answer),
        hops=len(decomposition) or len(ordered), type="bridge", supporting_ids=tuple(ordered),
        distractor_ids=tuple(distractors), decomposition=tuple(decomposition), answerable=answerable,
        source="musique", meta=extra)


def _musique_paragraphs(record: dict, where: str, rec: str, documents: _Docs) -> tuple[dict[int, str], list[str]]:
    """``({paragraph idx: document id}, supporting document ids in paragraph order)``."""
    paragraphs = _require(record, "paragraphs", list, where, rec)
    if not paragraphs:
        raise SearchDataFormatError(where, "has no paragraphs", record=rec, field="paragraphs")
    by_idx: dict[int, str] = {}
    supporting: list[str] = []
    for fname, para in _objects(paragraphs, "paragraphs", where, rec):
        idx = _require(para, "idx", int, where, rec, prefix=fname)
        title = _require(para, "title", str, where, rec, prefix=fname)
        text = _require(para, "paragraph_text", str, where, rec, prefix=fname)
        is_supporting = para.get("is_supporting", False)
        if not isinstance(is_supporting, bool):
            raise SearchDataFormatError(where, f"must be true or false, got {json_kind(is_supporting)}", record=rec,
                                        field=f"{fname}.is_supporting")
        if idx in by_idx:
            raise SearchDataFormatError(where, f"duplicate paragraph idx {idx}", record=rec, field=f"{fname}.idx")
        doc = _document("musique", title, text, documents)
        by_idx[idx] = doc.id
        if is_supporting and doc.id not in supporting:
            supporting.append(doc.id)
    return by_idx, supporting


def _musique_steps(record: dict, where: str, rec: str, by_idx: dict[int, str], answerable: bool) -> list[SubQuestion]:
    steps = record.get("question_decomposition", [])
    if not isinstance(steps, list):
        raise SearchDataFormatError(where, f"must be a list, got {json_kind(steps)}", record=rec,
                                    field="question_decomposition")
    decomposition: list[SubQuestion] = []
    for fname, step in _objects(steps, "question_decomposition", where, rec):
        sub_q = _require(step, "question", str, where, rec, prefix=fname)
        sub_a = _require(step, "answer", str, where, rec, prefix=fname)
        support = step.get("paragraph_support_idx")
        if support is not None and (isinstance(support, bool) or not isinstance(support, int)):
            raise SearchDataFormatError(where, f"must be an integer or null, got {json_kind(support)}", record=rec,
                                        field=f"{fname}.paragraph_support_idx")
        if support is not None and support not in by_idx and answerable:
            raise SearchDataFormatError(where, f"refers to paragraph idx {support}, which the record does not have",
                                        record=rec, field=f"{fname}.paragraph_support_idx")
        decomposition.append(SubQuestion(sub_q, sub_a, by_idx.get(support) if support is not None else None))
    return decomposition


def load_hotpotqa_json(
    path: str | os.PathLike[str],
    *,
    split: str | None = None,
    missing_support: str = "error",
    limit: int | None = None,
    sample: int | None = None,
    seed: int = 0,
    max_bytes: int | None = DEFAULT_MAX_BYTES,
) -> tuple[list[Document], list[SearchQuestion]]:
    """Read a HotpotQA file you downloaded: a JSON list of ``{_id, question, answer, supporting_facts, context,
    type, level}`` (JSON lines of the same objects are accepted too), as published or as the Hugging Face
    ``datasets`` export writes them.

    ``context`` is ``[[title, [sentence, …]], …]``; a document's text is its sentences joined as published (they
    carry their own leading spaces). ``supporting_facts`` is ``[[title, sentence_index], …]``: the supporting
    documents are the context paragraphs with those titles, in first-mention order; sentence indices are not
    checked. The Hugging Face layout (a record whose ``context`` is an object) holds the same as parallel lists,
    ``context = {title: [...], sentences: [[...], ...]}`` and ``supporting_facts = {title: [...], sent_id: [...]}``,
    and names the id ``id``; a record without one gets ``hotpotqa-q-<hash of the question>``, stable across
    subsets. ``hops`` is the number of supporting documents, ``type`` the record's ``bridge``/``comparison``,
    ``level`` goes to ``meta``. ``missing_support``: a supporting title not in the record's context is an
    ``"error"`` (default; never happens in the distractor setting) or ``"drop"`` ped and kept in
    ``meta["missing_support"]`` (the fullwiki setting's retrieved context may lack gold paragraphs), or ``"skip"``:
    such a question — and one whose context is empty — is left out, with its paragraphs, before ``sample`` /
    ``limit`` choose (the fullwiki questions whose every supporting paragraph was retrieved).

    ``split`` (:data:`HOTPOTQA_SPLITS`: ``train`` in ``hotpot_train_v1.1.json``, ``dev_distractor`` in
    ``hotpot_dev_distractor_v1.json``, ``dev_fullwiki`` in ``hotpot_dev_fullwiki_v1.json``, ``test_fullwiki``
    — no answers, refused — in ``hotpot_test_fullwiki_v1.json``) picks the file in a folder and is checked against
    a file's name. Then ``sample`` / ``limit`` choose questions.
    """
    if missing_support not in ("error", "drop", "skip"):
        raise ValueError(f"missing_support must be 'error', 'drop' or 'skip', got {missing_support!r}")
    check_subset(limit, sample, seed)
    path = split_file(path, split, HOTPOTQA_SPLITS, "HotpotQA")
    skip = missing_support == "skip"
    documents, questions = _questions(path, "_id", "HotpotQA questions", max_bytes,
                                      functools.partial(_hotpot_question, missing_support="drop" if skip else
                                                        missing_support, skip_empty=skip),
                                      id_field=_hotpot_id_key)
    if skip:
        questions = [q for q in questions if not q.meta.get("missing_support")]
        used = {i for q in questions for i in (*q.supporting_ids, *q.distractor_ids)}
        documents = {k: d for k, d in documents.items() if k in used}
    return _subset(documents, questions, limit, sample, seed)


def _hotpot_question(record: dict, rec: str, where: str, documents: _Docs, missing_support: str,
                     skip_empty: bool = False) -> SearchQuestion | None:
    if skip_empty and not record.get("context"):
        return None  # no paragraph at all: left out with missing_support="skip"
    qid = _hotpot_id(record, where, rec)
    question = _require(record, "question", str, where, rec)
    answer = _answer(record, where, rec, "HotpotQA")
    qtype = record.get("type", "bridge")
    if not isinstance(qtype, str):
        raise SearchDataFormatError(where, f"must be a string, got {json_kind(qtype)}", record=rec, field="type")
    by_title: dict[str, str] = {}
    for title, sentences in _hotpot_context(record, where, rec):
        doc = _document("hotpotqa", title, "".join(sentences).strip(), documents)
        by_title.setdefault(title, doc.id)
    supporting, missing = _hotpot_support(_hotpot_facts(record, where, rec), where, rec, by_title, missing_support)
    meta = {k: v for k, v in record.items()
            if k not in (_hotpot_id_key(record), "question", "answer", "type", "context", "supporting_facts")}
    if missing:
        meta["missing_support"] = missing
    distractors = list(dict.fromkeys(d for d in by_title.values() if d not in supporting))
    return SearchQuestion(
        id=qid, question=question, answer=answer, hops=len(supporting), type=qtype,
        supporting_ids=tuple(supporting), distractor_ids=tuple(distractors), source="hotpotqa", meta=meta)


def _hf_layout(record: dict) -> bool:
    """Whether ``record`` is in the Hugging Face ``datasets`` export layout (``context`` an object of lists)."""
    return isinstance(record.get("context"), dict)


def _hotpot_id_key(record: dict) -> str:
    """The field that names the record: ``_id`` as published, ``id`` in the Hugging Face export (or, when that
    export dropped it, ``question``, from which the id is derived)."""
    if not _hf_layout(record) or "_id" in record:
        return "_id"
    return "id" if "id" in record else "question"


def _hotpot_id(record: dict, where: str, rec: str) -> str:
    key = _hotpot_id_key(record)
    if key != "question":
        return _require(record, key, str, where, rec)
    question = _require(record, "question", str, where, rec)
    return "hotpotqa-q-" + hashlib.sha1(question.encode()).hexdigest()[:12]


def _hotpot_context(record: dict, where: str, rec: str) -> list[tuple[str, list[str]]]:
    """``[(title, sentences), …]`` from either layout, each entry checked."""
    if _hf_layout(record):
        titles, sentences = _parallel(record, "context", ("title", "sentences"), where, rec)
        entries = [[t, s] for t, s in zip(titles, sentences, strict=True)]
        label = "context.sentences[{}]"
    else:
        entries = _require(record, "context", list, where, rec)
        label = "context[{}]"
    if not entries:
        raise SearchDataFormatError(where, "has no paragraphs", record=rec, field="context")
    for k, entry in enumerate(entries):
        if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str)
                and isinstance(entry[1], list) and all(isinstance(s, str) for s in entry[1])):
            expected = "a title and a list of sentences" if _hf_layout(record) else "[title, [sentence, ...]]"
            raise SearchDataFormatError(where, f"expected {expected}", record=rec, field=label.format(k))
    return [(entry[0], entry[1]) for entry in entries]


def _hotpot_facts(record: dict, where: str, rec: str) -> list[tuple[list, str]]:
    """``[([title, sentence_index], field name), …]`` from either layout (checked by :func:`_hotpot_support`)."""
    if _hf_layout(record):
        titles, ids = _parallel(record, "supporting_facts", ("title", "sent_id"), where, rec)
        return [([t, i], f"supporting_facts.title/sent_id[{k}]") for k, (t, i) in enumerate(zip(titles, ids, strict=True))]
    facts = _require(record, "supporting_facts", list, where, rec)
    return [(fact, f"supporting_facts[{k}]") for k, fact in enumerate(facts)]


def _parallel(record: dict, name: str, keys: tuple[str, str], where: str, rec: str) -> tuple[list, list]:
    """The two parallel lists ``record[name][keys[0]]`` and ``record[name][keys[1]]`` of the Hugging Face layout,
    checked to be lists of the same length."""
    value = record.get(name)
    if not isinstance(value, dict):
        raise SearchDataFormatError(where, f"must be an object {{{keys[0]}: [...], {keys[1]}: [...]}} like context's"
                                    f", got {json_kind(value)}", record=rec, field=name)
    first = _require(value, keys[0], list, where, rec, prefix=name)
    second = _require(value, keys[1], list, where, rec, prefix=name)
    if len(first) != len(second):
        raise SearchDataFormatError(where, f"has {len(second)} entries for {len(first)} in {name}.{keys[0]}; the "
                                    "two lists run in parallel", record=rec, field=f"{name}.{keys[1]}")
    return first, second


def _hotpot_support(facts: list[tuple[list, str]], where: str, rec: str, by_title: dict[str, str],
                    missing_support: str) -> tuple[list[str], list[str]]:
    """``(supporting document ids in first-mention order, supporting titles missing from the context)`` from the
    ``([title, sentence_index], field name)`` pairs of :func:`_hotpot_facts`."""
    supporting: list[str] = []
    missing: list[str] = []
    for fact, fname in facts:
        if not (isinstance(fact, list) and len(fact) == 2 and isinstance(fact[0], str)
                and isinstance(fact[1], int) and not isinstance(fact[1], bool)):
            raise SearchDataFormatError(where, "expected [title, sentence_index]", record=rec, field=fname)
        title = fact[0]
        if title not in by_title:
            if missing_support == "error":
                raise SearchDataFormatError(where, f"title {title!r} is not in the record's context (for a fullwiki "
                                            "file, pass missing_support='drop')", record=rec, field=fname)
            if title not in missing:
                missing.append(title)
        elif by_title[title] not in supporting:
            supporting.append(by_title[title])
    return supporting, missing


# ---------------------------------------------------------------------------------------------------------------
# Shared by both loaders
# ---------------------------------------------------------------------------------------------------------------


def _records(path: Path, id_key: str, what: str, max_bytes: int | None) -> Iterator[tuple[str, dict]]:
    """``(label, record)`` for each JSON object of the file; the label names it and, when it has one, its id."""
    where = str(path)
    text = read_text(path, max_bytes=max_bytes, error=SearchDataFormatError)
    for rec, record in json_records(text, where, what=what, record_keys=(id_key, "question"),
                                    error=SearchDataFormatError):
        if not isinstance(record, dict):
            raise SearchDataFormatError(where, f"expected a JSON object, got {json_kind(record)}", record=rec)
        if isinstance(record.get(id_key), str):
            rec += f" ({id_key} {record[id_key]!r})"
        yield rec, record


def _answer(record: dict, where: str, rec: str, dataset: str) -> str:
    if "answer" not in record:
        raise SearchDataFormatError(where, f"missing (a split without answers, like {dataset}'s test set, cannot be "
                                    "scored)", record=rec, field="answer")
    return _require(record, "answer", str, where, rec)


def _questions(path: Path, id_key: str, what: str, max_bytes: int | None,
               build: Callable[[dict, str, str, _Docs], SearchQuestion | None],
               id_field: Callable[[dict], str] | None = None) -> tuple[_Docs, list[SearchQuestion]]:
    """``(documents, questions)``: ``build(record, label, where, documents)`` for each record of the file (it adds
    the record's paragraphs to ``documents``); a question id seen twice is an error naming both records and the
    field the id came from (``id_field(record)`` where the layout varies by record, else ``id_key``)."""
    documents: _Docs = {}
    questions: list[SearchQuestion] = []
    seen: dict[str, str] = {}
    for rec, record in _records(path, id_key, what, max_bytes):
        q = build(record, rec, str(path), documents)
        if q is None:
            continue
        if q.id in seen:
            field = id_field(record) if id_field else id_key
            raise SearchDataFormatError(str(path), f"duplicate {field} {q.id!r} (first at {seen[q.id]})", record=rec,
                                        field=field)
        seen[q.id] = rec
        questions.append(q)
    return documents, questions


def _objects(items: list, name: str, where: str, rec: str) -> Iterator[tuple[str, dict]]:
    """``(field label, item)`` for each item of the list field ``name``, which must all be JSON objects."""
    for k, item in enumerate(items):
        fname = f"{name}[{k}]"
        if not isinstance(item, dict):
            raise SearchDataFormatError(where, f"expected an object, got {json_kind(item)}", record=rec, field=fname)
        yield fname, item


def _subset(documents: _Docs, questions: list[SearchQuestion], limit, sample, seed
            ) -> tuple[list[Document], list[SearchQuestion]]:
    """``sample`` / ``limit`` questions, and the documents they refer to (all of them when the file is whole)."""
    kept = take(questions, limit=limit, sample=sample, seed=seed)
    if limit is None and sample is None:
        return list(documents.values()), kept
    used = {i for q in kept for i in (*q.supporting_ids, *q.distractor_ids)}
    return [d for d in documents.values() if d.id in used], kept


def _require(obj: dict, name: str, kind: type, where: str, rec: str, *, prefix: str | None = None) -> Any:
    fname = f"{prefix}.{name}" if prefix else name
    if name not in obj:
        raise SearchDataFormatError(where, "missing", record=rec, field=fname)
    value = obj[name]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        expected = {str: "a string", int: "an integer", list: "a list"}[kind]
        raise SearchDataFormatError(where, f"must be {expected}, got {json_kind(value)}", record=rec, field=fname)
    return value


def _document(prefix: str, title: str, text: str, documents: _Docs) -> Document:
    """The document for (title, text), created once; its id hashes both, so it is stable across subsets."""
    digest = hashlib.sha1(f"{title}\n{text}".encode()).hexdigest()[:12]
    doc_id = f"{prefix}-{digest}"
    if doc_id not in documents:
        documents[doc_id] = Document(doc_id, title, text)
    return documents[doc_id]
