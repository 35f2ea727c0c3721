"""HawkesLLM: a Hawkes process decides when which node speaks and which past events it remembers; a language
model writes the text (Deng, Ye, Xie 2026). Memory selectors, the prompt, the generation loop, diagnostics.

    from uncertainty_lab.cascade import Event, NodeSpec, simulate_cascade
    run = simulate_cascade(Event(0.0, 0, "seed headline"), fit.model, "hawkes", get_llm("auto"),
                           steps=20, k=3, seed=0, node_specs=specs, out="run.jsonl")

``alpha[j, i]`` is the excitation from source j to target i: the memory reads column n_t of α.
Modules: ``model`` (Event, NodeSpec, History), ``selectors`` (the ``memory_selectors`` plugins),
``prompt`` (the template), ``sampling`` (O(N) next-event draws), ``loop`` (simulate_cascade, CascadeRun),
``metrics`` (alignment, drift, summaries), ``experiment`` (selectors × k × runs on the chronological split: the
paper's table and figure; ``uncertainty-lab cascade run``).
"""

from ..contracts.memory import CascadeError, Event, History, MemoryItem, NodeSpec, as_node_specs, check_memory
from .loop import CascadeResumeError, CascadeRun, CascadeStep, simulate_cascade, step_seeds
from .metrics import (
    CurveSummary,
    Interval,
    RunDiagnostics,
    StepValues,
    Trend,
    aggregate,
    alignment,
    curve_band,
    evaluate_run,
    global_drift,
    interval,
    local_drift,
    summarize,
    trend,
)
from .prompt import build_prompt, format_memory_line, prompt_hash
from .sampling import has_fast_path, next_event
from .selectors import (
    FullHistorySelector,
    HawkesExplanation,
    HawkesSelector,
    NoMemorySelector,
    RandomSelector,
    RecencySelector,
    SemanticSelector,
)

__all__ = [
    "CascadeError",
    "CascadeResumeError",
    "CascadeRun",
    "CascadeStep",
    "CurveSummary",
    "Event",
    "FullHistorySelector",
    "HawkesExplanation",
    "HawkesSelector",
    "History",
    "Interval",
    "MemoryItem",
    "NoMemorySelector",
    "NodeSpec",
    "RandomSelector",
    "RecencySelector",
    "RunDiagnostics",
    "SemanticSelector",
    "StepValues",
    "Trend",
    "aggregate",
    "alignment",
    "as_node_specs",
    "build_prompt",
    "check_memory",
    "curve_band",
    "evaluate_run",
    "format_memory_line",
    "global_drift",
    "has_fast_path",
    "interval",
    "local_drift",
    "next_event",
    "prompt_hash",
    "simulate_cascade",
    "step_seeds",
    "summarize",
    "trend",
]
