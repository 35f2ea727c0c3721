"""Questions as short-answer :class:`QAItem` s from any question loader — closed book for the multi-hop sets.

A HotpotQA or MuSiQue loader returns ``(documents, questions)`` for the search lab; asked for short-answer
questions (the orchestration lab's ``data``), the same files give each question with its gold answer and aliases
only, *closed book*: none of its paragraphs goes with it, so a run measures what a model knows, not multi-hop
reading. A yes/no gold answer (HotpotQA's comparison questions) becomes a ``yes_no_multistep`` item with the
yes/no aliases StrategyQA's items use; any other a ``factual`` one. Unanswerable MuSiQue questions (the ``full``
release's ``answerable: false``) are left out: a closed-book item needs a gold answer.

    from uncertainty_lab.datasets.closed_book import load_questions
    items = load_questions("hotpotqa", "hotpot_dev_distractor_v1.json", split="dev_distractor", sample=60)
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from uncertainty_lab.datasets.loaders import LOADERS, load
from uncertainty_lab.datasets.qa import NO_ALIASES, YES_ALIASES, QAItem
from uncertainty_lab.datasets.search import SearchQuestion

__all__ = ["CLOSED_BOOK", "QUESTION_LOADERS", "closed_book_items", "load_questions"]

#: Loaders of multi-hop search data whose questions become closed-book items.
CLOSED_BOOK: tuple[str, ...] = ("hotpotqa", "musique")
#: Every loader :func:`load_questions` takes: those that give :class:`QAItem` s, then the closed-book ones.
QUESTION_LOADERS: tuple[str, ...] = ("truthfulqa", "strategyqa", "shipped_qa", "gsm8k", "world", *CLOSED_BOOK)


def closed_book_items(questions: Iterable[SearchQuestion]) -> list[QAItem]:
    """Each answerable question as a QAItem with its gold answer and aliases (no paragraph; see the module doc)."""
    items = []
    for q in questions:
        if not q.answerable:
            continue
        verdict = q.answer.strip().lower()
        if verdict in ("yes", "no"):
            gold, other = (YES_ALIASES, NO_ALIASES) if verdict == "yes" else (NO_ALIASES, YES_ALIASES)
            items.append(QAItem(id=q.id, category="yes_no_multistep", question=q.question, answers=gold,
                                incorrect=other, source=q.source, meta={"closed_book": True, "type": q.type}))
        else:
            answers = tuple(dict.fromkeys(a for a in (q.answer, *q.aliases) if a.strip()))
            items.append(QAItem(id=q.id, category="factual", question=q.question, answers=answers,
                                source=q.source, meta={"closed_book": True, "type": q.type}))
    return items


def load_questions(name: str, path: str | os.PathLike[str] | None = None, **options: Any) -> list[QAItem]:
    """The short-answer questions of data set ``name`` (one of :data:`QUESTION_LOADERS`) read by its loader with
    ``options`` (:func:`~uncertainty_lab.datasets.loaders.load`); HotpotQA and MuSiQue closed book. The subset
    options (``sample``, ``limit``) choose among the file's questions before the unanswerable ones are left out."""
    if name not in QUESTION_LOADERS:
        other = " (it holds no questions with gold answers)" if name in LOADERS else ""
        raise ValueError(f"{name!r} is not a question loader{other}; choose from {', '.join(QUESTION_LOADERS)}")
    loaded = load(name, path, **options)
    if name in CLOSED_BOOK:
        _, questions = loaded
        return closed_book_items(questions)
    return list(loaded)
