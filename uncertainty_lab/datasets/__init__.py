"""Small data sets the package ships, and loaders for real ones the user brings (nothing is downloaded).

- :func:`load_qa_questions` — about 150 short-answer questions we wrote, in five categories
  (``factual``, ``ambiguous``, ``false_premise``, ``yes_no_multistep``, ``decline``); data card:
  ``datasets/data/qa_questions.md``. :func:`load_qa_jsonl` — your own question file in the shipped schema.
- :func:`load_truthfulqa_csv`, :func:`load_strategyqa_json`, :func:`load_gsm8k_jsonl` — read TruthfulQA /
  StrategyQA / GSM8K files you downloaded yourself into the same :class:`QAItem` form;
  :func:`~uncertainty_lab.datasets.closed_book.load_questions` gives any question loader's items, HotpotQA and
  MuSiQue closed book (the question and its gold answer only).
- :func:`load_news_cascade` — 248 headlines we wrote about a fictional lunar flyby, five outlet nodes, hours
  (data card ``datasets/data/news_cascade.md``); :func:`load_gdelt` reads GDELT exports you downloaded.
- :func:`load_search_corpus`, :func:`load_search_questions` — 300 documents about invented entities and 100
  multi-hop questions (``datasets/data/search_corpus.md``); :func:`load_musique_json`,
  :func:`load_hotpotqa_json` read those data sets' files.

Every loader by name: :data:`LOADERS` and :func:`load` (``load("musique", path, split="dev", sample=50)``).
Shared by all: ``limit``, ``sample``, ``seed`` (:mod:`.subset`), ``split`` where the public data set has
splits, and ``max_bytes`` (:mod:`.files`: files are untrusted input).
"""

from uncertainty_lab.datasets.audit import AuditItem as AuditItem, load_grader_audit as load_grader_audit  # noqa: I001
from uncertainty_lab.datasets.files import DEFAULT_MAX_BYTES, DatasetFormatError
from uncertainty_lab.datasets.gdelt import load_gdelt
from uncertainty_lab.datasets.gdelt_report import GdeltEvents, GdeltReport
from uncertainty_lab.datasets.gsm8k import load_gsm8k_jsonl
from uncertainty_lab.datasets.loaders import LOADERS, load
from uncertainty_lab.datasets.multihop import load_hotpotqa_json, load_musique_json
from uncertainty_lab.datasets.news import (
    NODES,
    NewsEvent,
    chronological_split,
    load_news_cascade,
    news_event_stream,
)
from uncertainty_lab.datasets.qa import (
    BEHAVIOURS,
    CATEGORIES,
    QAItem,
    load_qa_jsonl,
    load_qa_questions,
    qa_questions_resource,
)
from uncertainty_lab.datasets.search import (
    Document,
    SearchDataFormatError,
    SearchQuestion,
    SubQuestion,
    load_search_corpus,
    load_search_dataset,
    load_search_questions,
)
from uncertainty_lab.datasets.strategyqa import load_strategyqa_json
from uncertainty_lab.datasets.ties import TieReport
from uncertainty_lab.datasets.truthfulqa import load_truthfulqa_csv

__all__ = [
    "DEFAULT_MAX_BYTES",
    "LOADERS",
    "NODES",
    "Document",
    "GdeltEvents",
    "GdeltReport",
    "NewsEvent",
    "SearchDataFormatError",
    "SearchQuestion",
    "SubQuestion",
    "TieReport",
    "chronological_split",
    "load",
    "load_gdelt",
    "load_gsm8k_jsonl",
    "load_hotpotqa_json",
    "load_musique_json",
    "load_news_cascade",
    "load_search_corpus",
    "load_search_dataset",
    "load_search_questions",
    "news_event_stream",
    "BEHAVIOURS",
    "CATEGORIES",
    "DatasetFormatError",
    "QAItem",
    "load_qa_jsonl",
    "load_qa_questions",
    "load_strategyqa_json",
    "load_truthfulqa_csv",
    "qa_questions_resource",
]
