"""The stated rates of a search world measured back from the episodes the search lab ran on it, each with a
Wilson interval: does the simulation do what the world file says?

For each step the state the agent was shown is the belief before the step (the start record's for step 1, the
previous step's snapshot after); h is how far along the chain that state is (:meth:`Chain.progress`), and the
executed query is classified against the chain's hop queries:

| rate | counted over | a success is |
|---|---|---|
| ``format_reliability`` | every policy reply | the reply parsed strictly ("ok") |
| ``repairable`` | replies not parsed strictly | the reply was repaired (not a fallback) |
| ``stall`` | parsed replies with 1 ≤ h < k | the query re-searches hop h |
| ``query_skill`` | parsed replies with h < k, not a stall | the query targets hop h+1 |
| ``answer_when_done`` | parsed replies with h = k | an ANSWER action |
| ``extraction_accuracy`` | hop documents of the question shown to a predicate belief's extraction call | the call wrote a FACT citing it |

Episodes are read by their attributes only (``config``, ``start``, ``steps`` with ``policy``, ``query``,
``action``, ``passage_ids``, ``belief``, ``update``), so this module needs nothing from the search lab.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any

from ..table import Table
from .search import AGENT, SearchWorld

__all__ = ["count_rates", "measure_rates"]


def _facts_cited(raw: str) -> set[str]:
    """Document ids the extraction output cites in FACT items (text or JSON format)."""
    raw = raw or ""
    if raw.lstrip().startswith("{"):
        try:
            return {i for f in json.loads(raw).get("facts", []) for i in f.get("doc_ids", [])}
        except (ValueError, AttributeError):
            return set()
    out = set()
    for line in raw.splitlines():
        if line.startswith("FACT:") and "[" in line:
            out.update(x.strip() for x in line.rsplit("[", 1)[1].rstrip("]").split(","))
    return out


def count_rates(world: SearchWorld, episodes: Iterable[Any]) -> dict[str, list[int]]:
    """``{rate: [successes, trials]}`` over the episodes' steps (see the module doc)."""
    counts = {name: [0, 0] for name in AGENT}

    def add(name: str, ok: bool) -> None:
        counts[name][0] += int(ok)
        counts[name][1] += 1

    for ep in episodes:
        chain = world.chains.get(ep.config["question"]["question"])
        if chain is None:
            raise ValueError(f"episode of question {ep.config['question']['id']!r} is not on world {world.name}")
        state = ep.start["belief"]["text"]
        for step in ep.steps:
            parse = step.policy.get("parse")
            if parse is not None:
                add("format_reliability", parse == "ok")
                if parse != "ok":
                    add("repairable", parse == "repaired")
            if parse in ("ok", "repaired"):
                h = chain.progress(state)
                if h == chain.k:
                    add("answer_when_done", step.action == "answer")
                else:
                    stalled = h >= 1 and step.query == chain.hop_query(h)
                    if h >= 1:
                        add("stall", stalled)
                    if not stalled:
                        add("query_skill", step.query == chain.hop_query(h + 1))
            raw = step.update.get("raw") if isinstance(step.update, dict) else None
            if raw is not None:
                cited = _facts_cited(raw)
                for doc_id in dict.fromkeys(step.passage_ids):
                    if doc_id in chain.doc_ids:
                        add("extraction_accuracy", doc_id in cited)
            state = step.belief["text"]
    return counts


def measure_rates(world: SearchWorld, episodes: Iterable[Any], *, level: float = 0.95) -> Table:
    """One row per stated rate: the world's value, the measured share ``k / n`` and its Wilson interval, and
    whether the stated value lies inside it (NaN, shown "—", where no step counted)."""
    from statsmodels.stats.proportion import proportion_confint

    rows = []
    for name, (k, n) in count_rates(world, episodes).items():
        low, high = proportion_confint(k, n, alpha=1 - level, method="wilson") if n else (math.nan, math.nan)
        stated = world.rates[name]
        rows.append({"rate": name, "stated": stated, "measured": k / n if n else math.nan, "k": k, "n": n,
                     f"low ({level:.0%} Wilson)": float(low), f"high ({level:.0%} Wilson)": float(high),
                     "inside": (low - 1e-12 <= stated <= high + 1e-12) if n else math.nan})
    return Table(rows, title=f"world:{world.name}: stated rates measured back from the episodes")
