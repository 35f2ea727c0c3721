"""Every data-set loader by name, so a config can say ``data = {name = "musique", path = "...", sample = 50}``.

``load(name, path, **options)`` calls ``LOADERS[name](path, **options)``; every loader takes ``limit``,
``sample``, ``seed`` and ``max_bytes``, and those whose public data set has splits take ``split``.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable
from typing import Any

from uncertainty_lab.datasets.gdelt import load_gdelt
from uncertainty_lab.datasets.gsm8k import load_gsm8k_jsonl
from uncertainty_lab.datasets.multihop import load_hotpotqa_json, load_musique_json
from uncertainty_lab.datasets.news import load_news_cascade
from uncertainty_lab.datasets.qa import load_qa_jsonl
from uncertainty_lab.datasets.search import load_search_dataset
from uncertainty_lab.datasets.strategyqa import load_strategyqa_json
from uncertainty_lab.datasets.truthfulqa import load_truthfulqa_csv
from uncertainty_lab.datasets.world_questions import load_world_questions

__all__ = ["LOADERS", "load"]

#: name → loader. The ``shipped_*`` ones read the package's own data when ``path`` is ``None``.
LOADERS: dict[str, Callable[..., Any]] = {
    "truthfulqa": load_truthfulqa_csv,
    "strategyqa": load_strategyqa_json,
    "hotpotqa": load_hotpotqa_json,
    "musique": load_musique_json,
    "gsm8k": load_gsm8k_jsonl,
    "gdelt": load_gdelt,
    "shipped_qa": load_qa_jsonl,
    "shipped_search": load_search_dataset,
    "shipped_news": load_news_cascade,
    "world": load_world_questions,
}


def load(name: str, path: str | os.PathLike[str] | None = None, **options: Any) -> Any:
    """The data set ``name`` (a key of :data:`LOADERS`) from ``path``, with the loader's ``options``.

    Errors name what was wrong: an unknown data set (listing the names), a missing ``path`` for a data set you
    download yourself, or an option the loader does not take (listing those it does).
    """
    if name not in LOADERS:
        raise ValueError(f"unknown data set {name!r}; choose from {', '.join(LOADERS)}")
    loader = LOADERS[name]
    params = list(inspect.signature(loader).parameters.values())
    if path is None and params[0].default is inspect.Parameter.empty:
        raise ValueError(f"data set {name!r} reads a file you downloaded: pass its path (nothing is downloaded)")
    try:
        inspect.signature(loader).bind(path, **options)
    except TypeError as exc:
        accepted = ", ".join(p.name for p in params[1:])
        raise ValueError(f"data set {name!r}: {exc}; {loader.__name__} takes {accepted}") from None
    return loader(path, **options)
