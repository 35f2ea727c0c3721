"""How a cascade used its memory: on what share of steps the selector gave the model an **empty** memory, and what
share of the generated texts **copy** — an earlier text of the run, or one of the step's own memory items — word for
word. One place computes these for the report (:class:`~uncertainty_lab.cascade.result.CascadeResult`), the
notebook's explorer and ``benchmarks/real_data.py``.

A selector whose memory is empty at every step (a HawkesLLM selector on a fit with α = 0) runs the model from the
instruction alone: its S_t then measures the prompt, not the memory, and the report must say so.

:func:`memory_schedule` replays which memory each step had without a language model: the event schedule is drawn
from generators seeded by (seed, step) and depends only on earlier times and nodes, and the ``hawkes``, ``recency``
and ``random`` selectors read only those too, so the memories of a run are known without its texts.
"""

from __future__ import annotations

import math
import re
from typing import Any

from .. import registry
from ..contracts.memory import CascadeError, Event, History

__all__ = ["TEXT_FREE_SELECTORS", "copy_rate", "memory_copy_rate", "memory_empty_rate", "memory_schedule",
           "memory_use"]

#: Selectors whose memory depends only on times and nodes (never on texts): their memories can be replayed.
TEXT_FREE_SELECTORS = ("hawkes", "recency", "random", "none", "full_history")


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w]+", " ", text.lower()).split())


def copy_rate(run: Any) -> float:
    """The share of generated texts of ``run`` (a :class:`~uncertainty_lab.cascade.record.CascadeRun`) that
    repeat an earlier text of the run (the seed included) word for word, ignoring case and punctuation: how often
    the model just copies what it was shown or wrote before. NaN for a run with no steps."""
    seen = {_norm(run.seed_event.text)}
    copies = 0
    for s in run.steps:
        key = _norm(s.text)
        copies += key in seen
        seen.add(key)
    return copies / len(run.steps) if run.steps else math.nan


def memory_copy_rate(run: Any) -> float:
    """The share of generated texts that repeat, word for word (case and punctuation ignored), a text of **their
    own step's memory** — what the model was shown in its prompt. NaN for a run with no steps."""
    if not run.steps:
        return math.nan
    events = run.events
    hits = sum(_norm(s.text) in {_norm(events[m.index].text) for m in s.memory} for s in run.steps)
    return hits / len(run.steps)


def memory_empty_rate(run: Any) -> float:
    """The share of steps whose memory was empty (the model saw the instruction only). NaN with no steps."""
    return sum(not s.memory for s in run.steps) / len(run.steps) if run.steps else math.nan


def memory_use(run: Any) -> dict[str, float]:
    """``{"memory_empty", "copies", "copies_memory"}`` of one run: :func:`memory_empty_rate`, :func:`copy_rate`
    and :func:`memory_copy_rate`."""
    return {"memory_empty": memory_empty_rate(run), "copies": copy_rate(run), "copies_memory": memory_copy_rate(run)}


def memory_schedule(setup: Any, selector: str, k: int, seed: int, steps: int,
                    horizon: float | None = None) -> list[int]:
    """The memory size of each step of the run (``selector``, ``k``, ``seed``, ``steps``) from ``setup`` (a
    :func:`~uncertainty_lab.cascade.experiment.prepare` result), replayed without a language model (see the
    module docstring); only for the :data:`TEXT_FREE_SELECTORS`."""
    from .run import step_seeds
    from .sampling import next_event

    if selector not in TEXT_FREE_SELECTORS:
        raise CascadeError(f"memory_schedule replays selectors that ignore texts {TEXT_FREE_SELECTORS}, not "
                           f"{selector!r}: its memories depend on the generated texts, so run it")
    sel = registry.resolve("memory_selectors", selector, what="selector")
    history = History(setup.node_specs, [setup.seed_event])
    sizes = []
    for t in range(1, steps + 1):
        seeds = step_seeds(seed, t)
        nxt = next_event(setup.model, history, seeds["hawkes"], horizon=horizon)
        if nxt is None:
            break
        tau, node = float(nxt[0]), int(nxt[1])
        sizes.append(len(sel.select(history, tau, node, k, model=setup.model, rng=seeds["selector"])))
        history.append(Event(tau, node, ""))
    return sizes
