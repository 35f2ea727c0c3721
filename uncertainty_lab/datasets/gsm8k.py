"""GSM8K: read the ``test.jsonl`` (or ``train.jsonl``) you downloaded (github.com/openai/grade-school-math) into
:class:`QAItem` s whose gold answer is the final number. Nothing here touches the network.
"""

from __future__ import annotations

import os
import re
from typing import Any

from uncertainty_lab.datasets.files import DEFAULT_MAX_BYTES, DatasetFormatError, json_records, read_text
from uncertainty_lab.datasets.qa import QAItem
from uncertainty_lab.datasets.subset import check_subset, split_file, take

__all__ = ["GSM8K_SPLITS", "load_gsm8k_jsonl"]

#: Which public file holds which split.
GSM8K_SPLITS: dict[str, tuple[str, ...]] = {"train": ("train.jsonl",), "test": ("test.jsonl",)}

_FINAL = re.compile(r"####\s*(?P<number>-?[\d,]*\.?\d+)\s*$")


def load_gsm8k_jsonl(
    path: str | os.PathLike[str],
    *,
    split: str | None = None,
    category: str = "factual",
    limit: int | None = None,
    sample: int | None = None,
    seed: int = 0,
    max_bytes: int | None = DEFAULT_MAX_BYTES,
) -> list[QAItem]:
    """Read GSM8K questions: JSON lines (or a JSON list) of ``{question, answer}``, where ``answer`` is the worked
    solution ending in ``#### <number>``. The gold answer is that number with its thousands commas removed; the
    solution goes to ``note``. Ids are ``gsm8k-00001`` … in file order. ``split`` (:data:`GSM8K_SPLITS`) picks
    ``train.jsonl`` / ``test.jsonl`` in a folder. Then ``sample`` / ``limit``.
    """
    check_subset(limit, sample, seed)
    path = split_file(path, split, GSM8K_SPLITS, "GSM8K")
    text = read_text(path, max_bytes=max_bytes)
    records = json_records(text, path, what="GSM8K questions", record_keys=("question",))
    items = [_item(entry, row, path, n, category) for n, (row, entry) in enumerate(records, start=1)]
    return take(items, limit=limit, sample=sample, seed=seed)


def _item(entry: Any, row: str, path, n: int, category: str) -> QAItem:
    if not isinstance(entry, dict):
        raise DatasetFormatError(path, f"expected a JSON object, got {type(entry).__name__}", row=row)
    question, answer = entry.get("question"), entry.get("answer")
    if not isinstance(question, str) or not question.strip():
        raise DatasetFormatError(path, f"question must be a non-empty string, got {question!r}", row=row,
                                 column="question")
    match = _FINAL.search(answer) if isinstance(answer, str) else None
    if match is None:
        raise DatasetFormatError(path, "answer must be the solution ending in '#### <number>', got "
                                 f"{str(answer)[-40:]!r}", row=row, column="answer")
    number = match.group("number").replace(",", "")
    return QAItem(id=f"gsm8k-{n:05d}", category=category, question=question.strip(), answers=(number,),
                  note=answer[:match.start()].strip(), source="gsm8k")
