"""Uncertainty-guided orchestration (HASSUM): a coordinator asks workers, reads semantic-uncertainty
metrics on their sampled answers, and a policy decides — accept, re-prompt, reassign, delegate, or
choose the best answer already produced at the round cap.

The domain:

- :mod:`.workers`: :class:`Worker` (backend, model, role, temperature) → primary answer + samples, sampled alike;
- :mod:`.policy`: :class:`Policy` (data) and its pure ``decide``; presets ``none``, ``entropy_only``,
  ``density_only``, ``both``; :func:`best_round`;
- :mod:`.coordinator`: :class:`Coordinator` (``run`` → :class:`Trace`, :mod:`.trace`);
- :mod:`.grading`: :class:`QAGrader` (any ``graders`` plugin by name, default ``strict``; every grade labelled
  correct / wrong / refused / uncertain);
  :mod:`.audit`: every grader against our hand-labelled answers (``python -m uncertainty_lab.orchestration.audit``);
- :mod:`.calibration`: gate thresholds chosen on a dev split at a target fire rate; :mod:`.report`: the report's
  gate sections (escalation warnings, fire rates per round, calibrated thresholds);
- :mod:`.explore`, :mod:`.cases`, :mod:`.sample_size`, :mod:`.scripted`: notebook 04's tables, case finder,
  sample-size arithmetic and scripted backend.

The lab (``docs/ARCHITECTURE.md``): :mod:`.config` (:class:`OrchestrationConfig`), :mod:`.record`
(:class:`OrchestrationRun`, its run-file ``FORMAT``), :mod:`.run` (:func:`run_benchmark`), :mod:`.experiment`
(:class:`OrchestrationExperiment`, ``EXPERIMENT``, :func:`run_experiment`), :mod:`.result`
(:class:`OrchestrationResult`) and :mod:`.figures`.
"""

from .calibration import Calibration, CalibrationSpec, GateCalibration, calibrate, choose_threshold, split_dev
from .config import ExperimentConfig, OrchestrationConfig, load_config, select_items
from .coordinator import ACCEPTANCE_CRITERIA, ANGLES, DEFAULT_METRICS, Coordinator
from .errors import OrchestrationError, OrchestrationResumeError
from .experiment import EXPERIMENT, OrchestrationExperiment, run_experiment
from .grading import REFUSAL_MARKERS, QAGrader, grade_label, is_refusal
from .policy import ACTIONS, GATES, PRESETS, Decision, Policy, Signals, best_round, get_policy, selection_key
from .record import BenchmarkRun, OrchestrationRun, QuestionRecord, policy_of
from .result import ExperimentResult, OrchestrationResult
from .run import run_benchmark
from .trace import Candidate, FinalAnswer, Round, Trace
from .workers import DEFAULT_SYSTEM, WORKER_ROLES, Extraction, Worker, WorkerAnswer, default_workers, extract_answer

__all__ = [
    "ACCEPTANCE_CRITERIA",
    "ACTIONS",
    "ANGLES",
    "DEFAULT_METRICS",
    "DEFAULT_SYSTEM",
    "EXPERIMENT",
    "GATES",
    "PRESETS",
    "REFUSAL_MARKERS",
    "WORKER_ROLES",
    "BenchmarkRun",
    "Calibration",
    "CalibrationSpec",
    "Candidate",
    "Coordinator",
    "Decision",
    "ExperimentConfig",
    "ExperimentResult",
    "Extraction",
    "FinalAnswer",
    "GateCalibration",
    "OrchestrationConfig",
    "OrchestrationError",
    "OrchestrationExperiment",
    "OrchestrationResult",
    "OrchestrationResumeError",
    "OrchestrationRun",
    "Policy",
    "QAGrader",
    "QuestionRecord",
    "Round",
    "Signals",
    "Trace",
    "Worker",
    "WorkerAnswer",
    "best_round",
    "calibrate",
    "choose_threshold",
    "default_workers",
    "extract_answer",
    "get_policy",
    "grade_label",
    "is_refusal",
    "load_config",
    "policy_of",
    "run_benchmark",
    "run_experiment",
    "select_items",
    "selection_key",
    "split_dev",
]
