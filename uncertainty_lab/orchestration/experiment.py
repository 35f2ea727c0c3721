"""The policy comparison as the lab's :class:`~uncertainty_lab.lab.Experiment`: the policies of the config
(``none``, ``entropy_only``, ``density_only``, ``both`` by default) on the configured data set (default: the
shipped QA set, or a subset) with the configured model, and an Ollama model when one is named.

- ``prepare``: the items (with ``calibrate``: split into dev and reported questions), the shared judge, the
  metrics, the grader, and one backend per model (an Ollama server is checked first, so a missing one is an
  error before anything runs); no model is asked yet;
- ``units``: one per (model, policy, chunk of ``questions_per_unit`` questions), journalled to
  ``out_dir/runs/<model>__<policy>/q<first>-q<last>.jsonl`` (``questions_per_unit = 0``: one per (model, policy),
  ``out_dir/runs/<model>__<policy>.jsonl``, the layout before 0.2); every question is seeded by its own text, so
  the chunking changes no answer; with ``calibrate``, the dev questions' chunks too (``out_dir/calibration/
  <model>/…``), a stage before the gated policies, which read them;
- ``run_unit``: :func:`~.run.run_benchmark` of that policy's coordinator over the chunk (resumes the run file);
  with ``calibrate``, a gated policy first gets its model's thresholds from the dev questions' first round
  (journalled once, so any unit order gives the same thresholds);
- ``collect``: the chunks of each (model, policy) joined into one run, and an :class:`~.result.OrchestrationResult`
  (``summary.md``, ``results.json``, ``figure.png``).

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
from ..datasets.source import data_provenance
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

__all__ = ["CALIBRATION", "EXPERIMENT", "OrchestrationExperiment", "load_config", "run_experiment", "select_items"]

#: the first part of a calibration unit's key: (CALIBRATION, model, chunk)
CALIBRATION = "calibration"


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
    data: dict[str, Any] = dataclasses.field(default_factory=dict)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "model"


def _chunks(folder: Path, stem: str, n: int, size: int) -> list[tuple[int, int, Path]]:
    """``(first, end, run file)`` of each chunk of ``size`` of ``n`` questions: ``folder/stem/q<first>-q<last>.jsonl``
    (``size`` 0: one chunk, ``folder/stem.jsonl``)."""
    if size <= 0 or n == 0:
        return [(0, n, folder / f"{stem}.jsonl")]
    return [(lo, min(lo + size, n), folder / stem / f"q{lo:04d}-q{min(lo + size, n) - 1:04d}.jsonl")
            for lo in range(0, n, size)]


def _refuse_old_layout(config: OrchestrationConfig, context: Context) -> None:
    """A run file of the layout before 0.2 (one per model and policy) in ``out_dir`` while chunking: an error with
    the ways out, rather than a second run beside it."""
    if config.questions_per_unit == 0 or config.overwrite:
        return
    out = Path(config.out_dir)
    old = [out / "runs" / f"{_slug(label)}__{_slug(p.name)}.jsonl" for label in context.backends
           for p in context.policies] + [out / "calibration" / f"{_slug(label)}.jsonl" for label in context.backends]
    found = [p for p in old if p.is_file() and p.stat().st_size > 0]
    if found:
        raise OrchestrationResumeError(
            f"{found[0]} is a run file of the layout before 0.2 (one per model and policy); this version writes one "
            f"per {config.questions_per_unit} questions under runs/<model>__<policy>/. Set questions_per_unit = 0 "
            "to resume it in its own layout, or choose another out_dir, or set overwrite = true (the completion "
            "cache replays every answer already generated)")


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
        from ..llm import check_ready, get_llm

        if not config.share_cache and config.executor != "serial":
            raise ValueError("share_cache = false keeps one completion cache per policy under out_dir/cache, which "
                             "worker processes cannot share; use executor = 'serial' for it")
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
        grader = QAGrader.from_setting(config.grading)
        by_label: dict[str, Any] = {}
        backends: dict[str, Any] = {}
        for spec in specs:
            shared = check_ready(_backend(spec, None))  # an Ollama server: checked now, in seconds
            label = getattr(shared, "label", type(shared).__name__)
            by_label[label], backends[label] = spec, shared
        return Context(items, judge, metrics, grader, policies, by_label, backends, dev,
                       data=data_provenance(config.data or {"loader": "shipped_qa"}))

    def units(self, config: OrchestrationConfig, context: Context) -> list[Unit]:
        """With ``calibrate``, the dev questions' chunks per model (stage 0); then one unit per (model, policy,
        chunk), a gated one calibrated in stage 1 after the dev chunks it reads (``needs``)."""
        _refuse_old_layout(config, context)
        out, size = Path(config.out_dir), config.questions_per_unit
        units = []
        for label in context.backends:
            if config.calibration is not None:
                units += [Unit((CALIBRATION, label, c), f"{label} [calibration dev {lo + 1}-{hi}]", path,
                               {"model": label, "policy": None, "range": (lo, hi), "stage": 0})
                          for c, (lo, hi, path) in enumerate(_chunks(out / "calibration", _slug(label),
                                                                     len(context.dev), size))]
        for label in context.backends:
            needs = [u.path for u in units if u.spec["model"] == label]
            for p in context.policies:
                stem = f"{_slug(label)}__{_slug(p.name)}"
                for c, (lo, hi, path) in enumerate(_chunks(out / "runs", stem, len(context.items), size)):
                    gated = bool(needs) and bool(p.metrics)
                    units.append(Unit((label, p.name, c), f"{label} [{p.name}]" + (f" {lo + 1}-{hi}" if size else ""),
                                      path, {"model": label, "policy": p, "range": (lo, hi), "stage": int(gated),
                                             "needs": needs if gated else []}))
        return units

    def _coordinator(self, config: OrchestrationConfig, context: Context, label: str, policy: Policy) -> Coordinator:
        backend = context.backends[label]
        if not config.share_cache:
            cache = Path(config.out_dir) / "cache" / f"{_slug(label)}__{_slug(policy.name)}.sqlite"
            backend = _backend(context.specs[label], cache)
        workers = default_workers(backend, temperature=config.temperature, max_tokens=config.max_tokens)
        return Coordinator(workers, policy, context.metrics, config.n_samples, context.judge, seed=config.seed)

    def _dev_run(self, config: OrchestrationConfig, context: Context, label: str, lo: int, hi: int,
                 path: Path) -> OrchestrationRun:
        """Dev questions ``lo:hi`` of model ``label`` under policy ``none`` (a calibration chunk)."""
        coordinator = self._coordinator(config, context, label, get_policy("none"))
        return run_benchmark(coordinator, context.dev[lo:hi], path, grader=context.grader, progress=config.progress,
                             resume=not config.overwrite, desc=f"{label} [calibration dev]", offset=lo,
                             depends={"data": context.data})

    def calibration(self, label: str, config: OrchestrationConfig, context: Context) -> Calibration | None:
        """Model ``label``'s thresholds from its dev questions' first round (asked once under policy ``none``,
        journalled under ``out_dir/calibration/``; a rerun reads the files). None without ``calibrate``."""
        if config.calibration is None:
            return None
        if label not in context.calibrations:
            size, folder = config.questions_per_unit, Path(config.out_dir) / "calibration"
            runs = [self._dev_run(config, context, label, lo, hi, path)
                    for lo, hi, path in _chunks(folder, _slug(label), len(context.dev), size)]
            run = OrchestrationRun.joined(runs, folder / _slug(label) if size else None)
            context.dev_runs[label] = run
            context.calibrations[label] = calibrate([t.first_signals for t in run.traces], run.ids,
                                                    config.calibration)
        return context.calibrations[label]

    def run_unit(self, unit: Unit, config: OrchestrationConfig, context: Context) -> OrchestrationRun:
        """The unit's policy (with ``calibrate``: at its model's calibrated thresholds) over its chunk of the
        reported items — or a chunk of the dev questions — streamed to (and resumed from) its run file."""
        label, policy = unit.spec["model"], unit.spec["policy"]
        lo, hi = unit.spec["range"]
        if policy is None:
            return self._dev_run(config, context, label, lo, hi, unit.path)
        cal = self.calibration(label, config, context) if policy.metrics else None
        if cal is not None:
            policy = cal.apply(policy)
        coordinator = self._coordinator(config, context, label, policy)
        return run_benchmark(coordinator, context.items[lo:hi], unit.path, grader=context.grader,
                             progress=config.progress, resume=not config.overwrite, desc=unit.label, offset=lo,
                             depends={"data": context.data})

    def collect(self, config: OrchestrationConfig, context: Context,
                records: dict[tuple, OrchestrationRun]) -> OrchestrationResult:
        """Each (model, policy)'s chunks joined into one run, and the result, with the pair-judgement cache hits
        and misses summed over every run."""
        chunks: dict[tuple[str, str], list[OrchestrationRun]] = {}
        for key, run in records.items():
            if key[0] != CALIBRATION:
                chunks.setdefault(key[:2], []).append(run)
        runs = Path(config.out_dir) / "runs"
        records = {(m, p): OrchestrationRun.joined(parts, runs / f"{_slug(m)}__{_slug(p)}"
                                                   if config.questions_per_unit else None)
                   for (m, p), parts in chunks.items()}
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
