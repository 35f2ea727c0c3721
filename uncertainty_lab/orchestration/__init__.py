"""Uncertainty-guided orchestration (HASSUM): a coordinator asks workers, reads semantic-uncertainty
metrics on their sampled answers, and a policy decides — accept, re-prompt, reassign, delegate, or
choose the best answer already produced at the round cap.

- :mod:`.workers`: :class:`Worker` (backend, model, role, temperature) → primary answer + samples, sampled alike;
- :mod:`.policy`: :class:`Policy` (data) and its pure ``decide``; presets ``none``, ``entropy_only``,
  ``density_only``, ``both``; :func:`best_round`;
- :mod:`.coordinator`: :class:`Coordinator` (``run`` → :class:`Trace`, ``run_benchmark`` → resumable JSONL,
  :class:`BenchmarkRun`);
- :mod:`.experiment`: the four-policy comparison with intervals, AUROCs, paired tests, table and figure.
"""

from .coordinator import (
    ACCEPTANCE_CRITERIA,
    ANGLES,
    DEFAULT_METRICS,
    BenchmarkRun,
    Candidate,
    Coordinator,
    FinalAnswer,
    OrchestrationError,
    OrchestrationResumeError,
    QuestionRecord,
    Round,
    Trace,
    policy_of,
)
from .experiment import ExperimentConfig, ExperimentResult, load_config, run_experiment, select_items
from .grading import REFUSAL_MARKERS, QAGrader, is_refusal
from .policy import ACTIONS, GATES, PRESETS, Decision, Policy, Signals, best_round, get_policy, selection_key
from .workers import DEFAULT_SYSTEM, WORKER_ROLES, Extraction, Worker, WorkerAnswer, default_workers, extract_answer

__all__ = [
    "ACCEPTANCE_CRITERIA",
    "ACTIONS",
    "ANGLES",
    "DEFAULT_METRICS",
    "DEFAULT_SYSTEM",
    "GATES",
    "PRESETS",
    "REFUSAL_MARKERS",
    "WORKER_ROLES",
    "BenchmarkRun",
    "Candidate",
    "Coordinator",
    "Decision",
    "ExperimentConfig",
    "ExperimentResult",
    "Extraction",
    "FinalAnswer",
    "OrchestrationError",
    "OrchestrationResumeError",
    "Policy",
    "QAGrader",
    "QuestionRecord",
    "Round",
    "Signals",
    "Trace",
    "Worker",
    "WorkerAnswer",
    "best_round",
    "default_workers",
    "extract_answer",
    "get_policy",
    "is_refusal",
    "load_config",
    "policy_of",
    "run_experiment",
    "select_items",
    "selection_key",
]
