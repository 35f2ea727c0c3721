"""The policy comparison as the lab's :class:`~uncertainty_lab.lab.Experiment`: the policies of the config
(``none``, ``entropy_only``, ``density_only``, ``both`` by default) on the configured data set (default: the
shipped QA set, or a subset) with the configured model, and an Ollama model when one is named.

- ``prepare``: the items (with ``calibrate``: split into dev and reported questions), the shared judge, the
  metrics, the grader, and one backend per model (an Ollama server is checked first, so a missing one is an
  error before anything runs); no model is asked yet;
- ``units``: one per (model, policy), journalled to ``out_dir/runs/<model>__<policy>.jsonl``;
- ``run_unit``: :func:`~.run.run_benchmark` of that policy's coordinator (resumes the run file); with
  ``calibrate``, a gated policy first gets its model's thresholds from the dev questions' first round
  (journalled once to ``out_dir/calibration/<model>.jsonl``, so any unit order gives the same thresholds);
- ``collect``: an :class:`~.result.OrchestrationResult` (``summary.md``, ``results.json``, ``figure.png``).

The first round is the same in every policy (same seed, prompt and worker), so the AUROCs read the
first-round signals against the first-round answers. ``uncertainty-lab orchestrate run --config FILE`` runs it
headless.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from .. import registry
from ..lab import Experiment, Unit
from .calibration import Calibration, calibrate, split_dev
from .config import ExperimentConfig, OrchestrationConfig, load_config, select_items  # noqa: F401 (old name)
from .coordinator import DEFAULT_METRICS, Coordinator
from .errors import OrchestrationResumeError
from .grading import QAGrader
from .policy import Policy, get_policy
from .record import OrchestrationRun
from .result import ExperimentResult, OrchestrationResult  # noqa: F401 (old name, importable here)
from .run import run_benchmark
from .workers import default_workers

__all__ = ["EXPERIMENT", "OrchestrationExperiment", "load_config", "run_experiment", "select_items"]


@dataclass
class Context:
    """What every (model, policy) unit shares: the reported ``items``, the ``judge`` every metric shares, the
    ``metrics`` (instances), the ``grader``, the ``policies``, per model label its spec and shared ``backends``;
    with ``calibrate``, the ``dev`` items and, once computed, each model's ``calibrations`` and ``dev_runs``."""

    items: list[Any]
    judge: Any
    metrics: dict[str, Any]
    grader: QAGrader
    policies: list[Policy]
    specs: dict[str, Any]
    backends: dict[str, Any]
    dev: list[Any] = dataclasses.field(default_factory=list)
    calibrations: dict[str, Calibration] = dataclasses.field(default_factory=dict)
    dev_runs: dict[str, OrchestrationRun] = dataclasses.field(default_factory=dict)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "model"


def _backend(spec: Any, cache_path: Path | None) -> Any:
    """A backend from a spec (or the instance itself), with its own completion cache at ``cache_path``."""
    from ..llm import CompletionCache, get_llm

    cache = None if cache_path is None else CompletionCache(cache_path)
    if not isinstance(spec, str):
        if cache is not None:
            spec = dataclasses.replace(spec) if dataclasses.is_dataclass(spec) else spec
            spec.cache = cache
        return spec
    return get_llm(spec, quiet=True, cache=cache)


def _metrics(config: OrchestrationConfig, judge: Any) -> dict[str, Any]:
    """The configured metrics by role (default :data:`~.coordinator.DEFAULT_METRICS`, plus ``extra_metrics``
    logged under their own names), each given the shared ``judge``."""
    specs = dict(config.metrics) if config.metrics is not None else dict(DEFAULT_METRICS)
    for name in config.extra_metrics:
        specs.setdefault(name, name)
    return {role: registry.resolve("metrics", spec, what=f"metrics[{role!r}]", defaults={"judge": judge})
            for role, spec in specs.items()}


class OrchestrationExperiment(Experiment):
    """config → one unit per (model, policy) → run files → :class:`OrchestrationResult`."""

    name: ClassVar[str] = "orchestration"
    config_class: ClassVar[type[OrchestrationConfig]] = OrchestrationConfig
    resume_error: ClassVar[type[Exception]] = OrchestrationResumeError
    unit_name: ClassVar[str] = "run"

    def prepare(self, config: OrchestrationConfig, *, llm: Any = None) -> Context:
        """The items, judge, metrics, grader and policies, and a backend per model (``llm`` replaces
        ``config.llm``). An Ollama model's server is checked here, before any run starts."""
        from ..llm import get_llm

        policies = config.policy_objects()
        items, dev = select_items(config), []
        if config.calibration is not None:
            dev, items = split_dev(items, config.calibration, config.seed)
        specs: list[Any] = [config.llm if llm is None else llm]
        if config.ollama_model:
            get_llm(f"ollama:{config.ollama_model}", quiet=True).check()  # server down, model not pulled: now
            specs.append(f"ollama:{config.ollama_model}")
        judge = registry.resolve("equivalence_judges", config.judge, what="judge")
        metrics = _metrics(config, judge)
        grader = QAGrader(**config.grading)
        by_label: dict[str, Any] = {}
        backends: dict[str, Any] = {}
        for spec in specs:
            shared = _backend(spec, None)
            label = getattr(shared, "label", type(shared).__name__)
            by_label[label], backends[label] = spec, shared
        return Context(items, judge, metrics, grader, policies, by_label, backends, dev)

    def units(self, config: OrchestrationConfig, context: Context) -> list[Unit]:
        """One unit per (model, policy), its run file ``runs/<model>__<policy>.jsonl`` under ``out_dir``."""
        runs = Path(config.out_dir) / "runs"
        return [Unit((label, p.name), f"{label} [{p.name}]", runs / f"{_slug(label)}__{_slug(p.name)}.jsonl",
                     {"model": label, "policy": p})
                for label in context.backends for p in context.policies]

    def _coordinator(self, config: OrchestrationConfig, context: Context, label: str, policy: Policy) -> Coordinator:
        backend = context.backends[label]
        if not config.share_cache:
            cache = Path(config.out_dir) / "cache" / f"{_slug(label)}__{_slug(policy.name)}.sqlite"
            backend = _backend(context.specs[label], cache)
        workers = default_workers(backend, temperature=config.temperature, max_tokens=config.max_tokens)
        return Coordinator(workers, policy, context.metrics, config.n_samples, context.judge, seed=config.seed)

    def calibration(self, label: str, config: OrchestrationConfig, context: Context) -> Calibration | None:
        """Model ``label``'s thresholds from its dev questions' first round (asked once under policy ``none``,
        journalled to ``out_dir/calibration/<model>.jsonl``; a rerun reads the file). None without ``calibrate``."""
        if config.calibration is None:
            return None
        if label not in context.calibrations:
            path = Path(config.out_dir) / "calibration" / f"{_slug(label)}.jsonl"
            coordinator = self._coordinator(config, context, label, get_policy("none"))
            run = run_benchmark(coordinator, context.dev, path, grader=context.grader, progress=config.progress,
                                resume=not config.overwrite, desc=f"{label} [calibration dev]")
            context.dev_runs[label] = run
            context.calibrations[label] = calibrate([t.first_signals for t in run.traces], run.ids,
                                                    config.calibration)
        return context.calibrations[label]

    def run_unit(self, unit: Unit, config: OrchestrationConfig, context: Context) -> OrchestrationRun:
        """The unit's policy (with ``calibrate``: at its model's calibrated thresholds) over every reported item,
        streamed to (and resumed from) its run file."""
        label, policy = unit.spec["model"], unit.spec["policy"]
        cal = self.calibration(label, config, context) if policy.metrics else None
        if cal is not None:
            policy = cal.apply(policy)
        coordinator = self._coordinator(config, context, label, policy)
        return run_benchmark(coordinator, context.items, unit.path, grader=context.grader, progress=config.progress,
                             resume=not config.overwrite, desc=unit.label)

    def collect(self, config: OrchestrationConfig, context: Context,
                records: dict[tuple, OrchestrationRun]) -> OrchestrationResult:
        """The result, with the pair-judgement cache hits and misses summed over every run."""
        hits = sum(r.judge_cache()["hits"] for r in records.values())
        misses = sum(r.judge_cache()["misses"] for r in records.values())
        cache = {"hits": hits, "misses": misses, "hit_rate": hits / (hits + misses) if hits + misses else math.nan}
        for label in context.backends:
            self.calibration(label, config, context)
        return OrchestrationResult(config, dict(records), cache, Path(config.out_dir), grader=context.grader,
                                   calibrations=dict(context.calibrations), dev_runs=dict(context.dev_runs))


EXPERIMENT = OrchestrationExperiment()


def run_experiment(config: OrchestrationConfig | Mapping[str, Any] | str | os.PathLike | None = None, *,
                   save: bool = True, **overrides: Any) -> OrchestrationResult:
    """Run every (model, policy) of ``config`` (a config, a dict, a .json / .toml path or None; ``overrides``
    replace settings), resuming any run file already in ``out_dir/runs``; write the summary, results and
    figure when ``save``."""
    return EXPERIMENT.run(config, save=save, **overrides)
