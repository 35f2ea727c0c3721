"""The plugin contracts: for each of the seven kinds, the methods a plugin must define and the types it exchanges.

| kind | a plugin defines | it exchanges | optional base class |
|---|---|---|---|
| ``kernels`` | ``value(u)``, ``integral(u)``, ``l1_norm()`` | arrays of lags u ≥ 0 | — (see ``hawkes.kernels``) |
| ``memory_selectors`` | ``select(history, t_next, node_next, k, model, rng)`` | :class:`History` → [:class:`MemoryItem`] | :class:`MemorySelector` |
| ``metrics`` | ``score(samples)`` | :class:`SampleSet` → :class:`MetricResult` | :class:`Metric`, :class:`JudgedMetric` |
| ``stopping_gates`` | ``reset()``, ``update(step)`` | a search step → :class:`GateDecision` | :class:`StoppingGate` |
| ``llm_backends`` | ``complete(messages, n, ...)`` | messages → [:class:`Completion`] | :class:`LLMBackend` |
| ``equivalence_judges`` | ``equivalent(a, b, question)`` | two texts → bool / :class:`Judgement` | :class:`EquivalenceJudge` |
| ``graders`` | ``grade(answer, correct, incorrect=(), question=None)`` | an answer and its references → :class:`Correctness` | :class:`Grader` |

The registry checks :data:`PROTOCOLS` when a plugin loads. Every name above is importable from here, so a
plugin distribution imports only the core: ``from uncertainty_lab.contracts import Metric, MetricResult``.
The memory and gate types are defined in this package; the others live with the core code that uses them
(``semantic``, ``llm``) and are re-exported here on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

from .gates import GateDecision, StoppingGate
from .memory import CascadeError, Event, History, MemoryItem, MemorySelector, NodeSpec, as_node_specs, check_memory

#: the methods a plugin of each kind must have; checked when it loads
PROTOCOLS: dict[str, tuple[str, ...]] = {
    "kernels": ("value", "integral", "l1_norm"),
    "memory_selectors": ("select",),
    "metrics": ("score",),
    "stopping_gates": ("reset", "update"),
    "llm_backends": ("complete",),
    "equivalence_judges": ("equivalent",),
    "graders": ("grade",),
}

_ELSEWHERE = {
    "Metric": "uncertainty_lab.semantic.metrics",
    "JudgedMetric": "uncertainty_lab.semantic.metrics",
    "MetricResult": "uncertainty_lab.semantic.metrics",
    "SampleSet": "uncertainty_lab.semantic.samples",
    "EquivalenceJudge": "uncertainty_lab.semantic.judges",
    "Judgement": "uncertainty_lab.semantic.judges",
    "LLMBackend": "uncertainty_lab.llm.base",
    "Completion": "uncertainty_lab.llm.base",
    "HawkesError": "uncertainty_lab.hawkes.errors",
    "Grader": "uncertainty_lab.semantic.grades",
    "Correctness": "uncertainty_lab.semantic.grades",
}

__all__ = [
    "PROTOCOLS",
    "CascadeError",
    "Event",
    "GateDecision",
    "History",
    "MemoryItem",
    "MemorySelector",
    "NodeSpec",
    "StoppingGate",
    "as_node_specs",
    "check_memory",
    *_ELSEWHERE,
]


def __getattr__(name: str) -> Any:
    if name in _ELSEWHERE:
        value = getattr(importlib.import_module(_ELSEWHERE[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
