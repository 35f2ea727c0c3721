"""How :meth:`uncertainty_lab.lab.Experiment.run` runs its units: :class:`Plan` reads the run-only settings
``executor`` (``serial``, ``processes``, ``dask``), ``workers``, ``scheduler`` and ``llm_hosts``, checks the pool of
model servers, and runs the units — in this process one after another (``serial``: each journal streamed step by
step, as always), or on worker processes or a cluster (:mod:`.remote`). Every executor gives the same records,
journals and tables: a unit is seeded from the config alone and its journal is the only state it carries.
"""

from __future__ import annotations

import difflib
import os
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["EXECUTORS", "Plan", "check_settings", "make_executor"]

EXECUTORS = ("serial", "processes", "dask")
#: the most worker processes a run starts (a run never starts more workers than it has units)
MAX_WORKERS = 64


def check_settings(config: Any) -> None:
    """``executor`` one of :data:`EXECUTORS`, ``workers`` a positive integer or None, ``scheduler`` an address
    (only with dask) or None, ``llm_hosts`` a list of addresses or None; else the config's error naming the fix."""
    error = getattr(config, "error", ValueError)
    executor = getattr(config, "executor", "serial")
    if executor not in EXECUTORS:
        close = difflib.get_close_matches(str(executor), EXECUTORS, n=1)
        raise error(f"executor must be one of {', '.join(map(repr, EXECUTORS))}, got {executor!r}"
                    + (f" (did you mean {close[0]!r}?)" if close else ""))
    workers = getattr(config, "workers", None)
    if workers is not None and (not isinstance(workers, int) or isinstance(workers, bool) or workers < 1):
        raise error(f"workers must be a positive integer (worker processes) or None (the CPU count), got {workers!r}")
    if workers is not None and workers > MAX_WORKERS:
        raise error(f"workers = {workers} is over the cap of {MAX_WORKERS} worker processes on one machine; give at "
                    f"most {MAX_WORKERS} (for more, run a dask cluster and give its scheduler)")
    scheduler = getattr(config, "scheduler", None)
    if scheduler is not None and (not isinstance(scheduler, str) or not scheduler.strip()):
        raise error(f"scheduler must be a dask scheduler address like 'tcp://host:8786', got {scheduler!r}")
    if scheduler and executor != "dask":
        raise error(f"scheduler = {scheduler!r} is a dask cluster's address: set executor = 'dask' too")
    hosts = getattr(config, "llm_hosts", None)
    if hosts is not None:
        from ..llm.ollama_backend import parse_hosts

        try:
            parse_hosts(hosts)
        except ValueError as exc:
            raise error(f"llm_hosts: {exc}") from None


def make_executor(config: Any, units: int | None = None) -> Any:
    """The executor object of a remote ``config.executor``, with no more workers than ``units``."""
    workers = config.workers or os.cpu_count() or 1
    if units is not None:
        workers = max(1, min(workers, units))
    if config.executor == "processes":
        from .local import ProcessExecutor

        return ProcessExecutor(workers)
    from .cluster import DaskExecutor

    return DaskExecutor(workers, config.scheduler)


class Plan:
    """One run's executor and model-server pool (see the module doc). A remote executor builds everything it runs
    from the config, so it refuses objects a caller passed in ``resources`` (e.g. ``llm=`` an instance)."""

    def __init__(self, config: Any, resources: Mapping[str, Any] | None = None):
        from ..llm.pool import HostPool, configured_hosts, ollama_models

        check_settings(config)
        self.config = config
        self.remote = getattr(config, "executor", "serial") != "serial"
        given = sorted(k for k, v in (resources or {}).items() if v is not None)
        if self.remote and given:
            raise config.error(f"executor = {config.executor!r} builds what the units share in each worker from the "
                               f"config alone, so it cannot use the objects passed in ({', '.join(given)}=); give "
                               "them as settings (llm = 'ollama:<model>', ...) or use executor = 'serial'")
        hosts = configured_hosts(config)
        self.pool = HostPool.check(hosts, ollama_models(config)) if hosts else None

    def prepare(self, fn: Callable[[], Any]) -> Any:
        """``fn()`` (the lab's ``prepare``), with a pool served by its first healthy host."""
        if self.pool is None:
            return fn()
        from ..llm.pool import serve

        return serve(fn, self.pool.order(0))[0]

    def run(self, experiment: Any, config: Any, context: Any, units: Sequence[Any],
            log: Callable[[int, int, str, float], None] | None = None) -> dict[tuple, Any]:
        """Every unit's record, keyed and ordered as the units; ``log(done, total, label, seconds)`` after each."""
        from ..progress import bar as progress_bar

        bar = progress_bar(total=len(units), show=config.progress, desc=f"{experiment.name} {experiment.unit_name}s",
                           unit=experiment.unit_name)
        done: list[Any] = []

        def on_done(unit: Any, record: Any, outcome: Any) -> None:
            done.append(unit.key)
            bar.set_postfix_str(unit.label, refresh=False)
            bar.update(1)
            if log is not None:
                log(len(done), len(units), unit.label, outcome.seconds)

        try:
            if self.remote:
                from .remote import run_remote

                return run_remote(experiment, config, context, units, make_executor(config, len(units)), self.pool,
                                  on_done)
            return self._serial(experiment, config, context, units, on_done)
        except experiment.resume_error as exc:
            raise type(exc)(f"{exc}. In an experiment: choose another out_dir, or set overwrite = true to start "
                            "afresh") from None
        finally:
            bar.close()

    def _serial(self, experiment: Any, config: Any, context: Any, units: Sequence[Any],
                on_done: Callable[[Any, Any, Any], None]) -> dict[tuple, Any]:
        """The units one after another in this process (stage by stage), each journal streamed as it runs."""
        from ..llm import LLMError
        from ..llm.pool import serve
        from .remote import stages
        from .task import Outcome, UnitFailed, unit_failed

        index = {unit.key: i for i, unit in enumerate(units)}
        records: dict[tuple, Any] = {}
        for unit in [u for stage in stages(units) for u in stage]:
            start = time.perf_counter()
            try:
                if self.pool is None:
                    records[unit.key] = experiment.run_unit(unit, config, context)
                else:
                    records[unit.key], served = serve(lambda u=unit: experiment.run_unit(u, config, context),
                                                      self.pool.order(index[unit.key]))
                    self.pool.record(unit.label, served)
            except UnitFailed:
                raise
            except LLMError as exc:
                raise unit_failed(unit.label, unit.path, f"{type(exc).__name__}: {exc}") from exc
            on_done(unit, records[unit.key], Outcome(unit.key, b"", [], seconds=time.perf_counter() - start))
        return {unit.key: records[unit.key] for unit in units}

    def annotate(self, result: Any) -> Any:
        """With a pool: the per-host table joins ``result``'s report (a "Model servers" section) and its
        ``to_dict()`` (``hosts``), and ``result.hosts`` holds the pool."""
        if self.pool is None:
            return result
        pool, report, to_dict = self.pool, result.report, result.to_dict
        result.hosts = pool
        result.report = lambda: f"{report()}\n\n{pool.markdown()}"
        result.to_dict = lambda: {**to_dict(), "hosts": pool.to_dict()}
        return result
