"""HawkesLLM: a Hawkes process decides when which node speaks and which past events it remembers; a language
model writes the text (Deng, Ye, Xie 2026). Memory selectors, the prompt, the generation loop, diagnostics and
the experiment.

    from uncertainty_lab.cascade import Event, NodeSpec, simulate_cascade
    run = simulate_cascade(Event(0.0, 0, "seed headline"), fit.model, "hawkes", get_llm("auto"),
                           steps=20, k=3, seed=0, node_specs=specs, out="run.jsonl")

``alpha[j, i]`` is the excitation from source j to target i: the memory reads column n_t of α.
The lab's files (``docs/ARCHITECTURE.md``): ``config`` (CascadeConfig), ``record`` (CascadeRun, its run file),
``run`` (simulate_cascade), ``experiment`` (selectors × k × runs on the chronological split;
``uncertainty-lab cascade run``), ``result`` (the paper's table), ``figures``. Its domain: ``selectors`` (the
``memory_selectors`` plugins), ``prompt`` (the templates), ``headlines`` (cleaning), ``memory_use`` (empty
memories, copies), ``sampling`` (O(N) next-event draws), ``diagnostics`` (alignment, drift, summaries).
"""

from ..contracts.memory import CascadeError, Event, History, MemoryItem, NodeSpec, as_node_specs, check_memory
from .config import CascadeConfig
from .diagnostics import (
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
from .experiment import EXPERIMENT, CascadeExperiment, CascadeSetup, run_experiment
from .headlines import clean_headline
from .memory_use import copy_rate, memory_copy_rate, memory_empty_rate, memory_schedule, memory_use
from .prompt import PROMPTS, build_prompt, format_memory_line, headline_prompt, prompt_hash
from .record import CascadeResumeError, CascadeRun, CascadeStep
from .result import CascadeExperimentResult, CascadeResult
from .run import Decoding, generate_step, simulate_cascade, step_seeds
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
    "EXPERIMENT",
    "PROMPTS",
    "CascadeConfig",
    "CascadeError",
    "CascadeExperiment",
    "CascadeExperimentResult",
    "CascadeResult",
    "CascadeResumeError",
    "CascadeRun",
    "CascadeSetup",
    "CascadeStep",
    "CurveSummary",
    "Decoding",
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
    "clean_headline",
    "copy_rate",
    "memory_copy_rate",
    "memory_empty_rate",
    "memory_schedule",
    "memory_use",
    "curve_band",
    "evaluate_run",
    "format_memory_line",
    "generate_step",
    "global_drift",
    "has_fast_path",
    "headline_prompt",
    "interval",
    "local_drift",
    "next_event",
    "prompt_hash",
    "run_experiment",
    "simulate_cascade",
    "step_seeds",
    "summarize",
    "trend",
]
