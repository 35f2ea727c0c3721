"""Small data sets the package ships, and loaders for real ones the user brings (nothing is downloaded).

- :func:`load_qa_questions` — about 150 short-answer questions we wrote, in five categories
  (``factual``, ``ambiguous``, ``false_premise``, ``yes_no_multistep``, ``decline``); data card:
  ``datasets/data/qa_questions.md``.
- :func:`load_truthfulqa_csv`, :func:`load_strategyqa_json` — read TruthfulQA / StrategyQA files you
  downloaded yourself into the same :class:`QAItem` form.
- :func:`load_qa_jsonl` — your own question file in the shipped schema.
"""

from uncertainty_lab.datasets.qa import (
    BEHAVIOURS,
    CATEGORIES,
    DatasetFormatError,
    QAItem,
    load_qa_jsonl,
    load_qa_questions,
    load_strategyqa_json,
    load_truthfulqa_csv,
    qa_questions_resource,
)

__all__ = [
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
