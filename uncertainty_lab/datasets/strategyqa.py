"""StrategyQA: read the question files you downloaded (github.com/eladsegal/strategyqa, or a copy of them as JSON
lines) into yes/no :class:`QAItem` s with their decomposition and facts. Nothing here touches the network.

Two public layouts are read: the official release (``qid``, ``term``, ``description``, ``question``, ``answer`` as
a JSON boolean, ``facts``, ``decomposition``, ``evidence``; ``strategyqa_train.json`` holds 2,290 questions), and
the re-split "question / answer / steps" copies (``question``, ``answer`` as ``"Yes."`` / ``"No."``, ``steps``: the
reasoning facts; ``strategyqa_train.json`` + ``strategyqa_valid.json`` + ``strategyqa_test.json``, without ids).
"""

from __future__ import annotations

import hashlib
import os
import re
from typing import Any

from uncertainty_lab.datasets.files import DEFAULT_MAX_BYTES, DatasetFormatError, json_records, read_text
from uncertainty_lab.datasets.qa import NO_ALIASES, YES_ALIASES, QAItem
from uncertainty_lab.datasets.subset import check_subset, split_file, take

__all__ = ["STRATEGYQA_SPLITS", "load_strategyqa_json"]

#: Which public file holds which split, as published (``.json``) or as JSON lines copies (the test split has no
#: answers and cannot be loaded as gold).
STRATEGYQA_SPLITS: dict[str, tuple[str, ...]] = {
    split: (f"strategyqa_{split}.json", f"strategyqa_{split}.jsonl")
    for split in ("train", "train_filtered", "valid", "test")
}


def load_strategyqa_json(
    path: str | os.PathLike[str],
    *,
    split: str | None = None,
    category: str = "yes_no_multistep",
    limit: int | None = None,
    sample: int | None = None,
    seed: int = 0,
    max_bytes: int | None = DEFAULT_MAX_BYTES,
) -> list[QAItem]:
    """Read StrategyQA questions you downloaded: a JSON list as published (``strategyqa_train.json``) or JSON
    lines of the same objects (as copies of it ship), whichever the file holds.

    Each object has ``qid``, ``term``, ``description``, ``question``, ``answer`` (a JSON boolean), ``facts`` (list
    of strings), ``decomposition`` (list of sub-questions) and ``evidence`` (ignored). Gold answers become
    ``["yes", "true"]`` or ``["no", "false"]`` with the opposite as ``incorrect``; ``term`` and ``description`` go
    to ``meta``. A record of the "question / answer / steps" layout (no ``qid``; ``answer`` the string ``"Yes."``
    or ``"No."``; ``steps`` its facts) gets the id ``strategyqa-q-<hash of the question>``, stable across subsets.
    ``split`` (:data:`STRATEGYQA_SPLITS`: ``train`` in ``strategyqa_train.json``, ``train_filtered``
    in ``strategyqa_train_filtered.json``, ``valid`` in ``strategyqa_valid.json`` (the re-split copies),
    ``test`` in ``strategyqa_test.json``, or ``.jsonl`` copies of them)
    picks the file when ``path`` is a folder and is checked against the name of a file; the test split ships
    without answers and is refused.
    Then ``sample`` / ``limit``.
    """
    check_subset(limit, sample, seed)
    path = split_file(path, split, STRATEGYQA_SPLITS, "StrategyQA")
    text = read_text(path, max_bytes=max_bytes)
    items: list[QAItem] = []
    seen: dict[str, str] = {}
    for row, entry in json_records(text, path, what="StrategyQA questions", record_keys=("qid", "question")):
        item = _item(entry, row, path, category)
        qid = item.id.removeprefix("strategyqa-")
        if qid in seen:
            raise DatasetFormatError(path, f"duplicate qid (first at {seen[qid]})", row=f"{row} (qid {qid!r})",
                                     column="qid")
        seen[qid] = row
        items.append(item)
    return take(items, limit=limit, sample=sample, seed=seed)


_VERDICT = re.compile(r"^\s*(yes|no)\s*\.?\s*$", re.IGNORECASE)


def _steps_layout(entry: dict) -> bool:
    """Whether ``entry`` is a "question / answer / steps" record (no ``qid``, its facts under ``steps``)."""
    return "qid" not in entry and "steps" in entry


def _steps_entry(entry: dict, row: str, path) -> dict:
    """A "question / answer / steps" record as an official one: ``qid`` from the question, ``answer`` a boolean,
    ``steps`` as ``facts``."""
    question = entry.get("question")
    if not isinstance(question, str) or not question.strip():
        raise DatasetFormatError(path, f"question must be a non-empty string, got {question!r}", row=row,
                                 column="question")
    answer = entry.get("answer")
    if isinstance(answer, str) and _VERDICT.match(answer):
        answer = _VERDICT.match(answer).group(1).lower() == "yes"
    elif not isinstance(answer, bool):
        raise DatasetFormatError(path, f"answer must be \"Yes.\" or \"No.\" (or JSON true / false), got {answer!r}",
                                 row=row, column="answer")
    qid = "q-" + hashlib.sha1(question.strip().encode()).hexdigest()[:12]
    return {"qid": qid, "question": question, "answer": answer, "facts": entry.get("steps"), "decomposition": []}


def _item(entry: Any, row: str, path, category: str) -> QAItem:
    if not isinstance(entry, dict):
        raise DatasetFormatError(path, f"expected a JSON object, got {type(entry).__name__}", row=row)
    if _steps_layout(entry):
        entry = _steps_entry(entry, row, path)
    qid = entry.get("qid")
    if not isinstance(qid, str | int) or isinstance(qid, bool) or not str(qid).strip():
        raise DatasetFormatError(path, f"qid must be a non-empty string, got {qid!r}", row=row, column="qid")
    qid = str(qid).strip()
    row = f"{row} (qid {qid!r})"
    question = entry.get("question")
    if not isinstance(question, str) or not question.strip():
        raise DatasetFormatError(path, f"question must be a non-empty string, got {question!r}", row=row,
                                 column="question")
    if "answer" not in entry:
        raise DatasetFormatError(path, "no 'answer' (StrategyQA's test split ships without answers; load the train "
                                 "split)", row=row, column="answer")
    answer = entry["answer"]
    if not isinstance(answer, bool):
        raise DatasetFormatError(path, f"answer must be JSON true or false, got {answer!r} ({type(answer).__name__})",
                                 row=row, column="answer")
    lists = {}
    for name in ("facts", "decomposition"):
        value = entry.get(name, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise DatasetFormatError(path, f"{name} must be a list of strings, got {value!r}", row=row, column=name)
        lists[name] = [v.strip() for v in value if v.strip()]
    meta = {k: entry[k] for k in ("term", "description") if isinstance(entry.get(k), str) and entry[k]}
    return QAItem(
        id=f"strategyqa-{qid}", category=category, question=question.strip(),
        answers=YES_ALIASES if answer else NO_ALIASES, incorrect=NO_ALIASES if answer else YES_ALIASES,
        note=f"StrategyQA term: {meta['term']}" if "term" in meta else "StrategyQA",
        decomposition=lists["decomposition"], facts=lists["facts"], source="strategyqa", meta=meta,
    )
