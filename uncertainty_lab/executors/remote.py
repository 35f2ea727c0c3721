"""The main process's side of a run on worker processes or a cluster: it sends each unit as a :class:`~.task.Task`
and, as each :class:`~.task.Outcome` comes back, is the one writer of the run: it writes the unit's journal
(whole, atomically: a temporary file renamed into place — also the part a unit that failed had finished), merges the worker's new completions into its cache, and
loads the unit's record with the lab's own ``run_unit`` on the now finished journal (which returns at once, no
model asked), so the records are built by the same code as in a serial run. A unit that failed with a model error
is reported (:class:`~.task.UnitFailed`, naming it, its error and its worker) once the other units of its stage are
in and journalled.

A unit's journal so far travels with it, so a sweep interrupted under one executor resumes under another.
"""

from __future__ import annotations

import copy
import hashlib
import os
import pickle
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .shipping import merge_rows, take_snapshot
from .task import Outcome, Task, unit_failed

__all__ = ["RUN_ONLY_FOR_WORKERS", "run_remote", "stages", "worker_config", "write_atomic"]

#: what a worker's copy of the config says for the run-only settings (it writes no files of its own, shows no bars)
RUN_ONLY_FOR_WORKERS = {"overwrite": False, "progress": False, "figure": False, "executor": "serial", "workers": None,
                        "scheduler": None}


def stages(units: Sequence[Any]) -> list[list[Any]]:
    """The units grouped by ``unit.spec["stage"]`` (default 0), in stage order: a stage starts when the one before
    has finished (orchestration's calibration runs before the gated policies that read it)."""
    by_stage: dict[int, list[Any]] = {}
    for unit in units:
        by_stage.setdefault(int(unit.spec.get("stage", 0)), []).append(unit)
    return [by_stage[s] for s in sorted(by_stage)]


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file in the same folder and a rename: a reader (or an interrupted
    run) sees the old file or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def worker_config(config: Any) -> tuple[Any, str]:
    """The config a worker gets (run-only settings as :data:`RUN_ONLY_FOR_WORKERS`) and the key its context is
    memoised by (a hash of that config without ``out_dir``). A config a worker cannot receive (an object that
    cannot be pickled in ``llm``) is the config's error naming the way out."""
    out = copy.copy(config)
    for name, value in RUN_ONLY_FOR_WORKERS.items():
        if hasattr(out, name):
            setattr(out, name, value)
    keyed = copy.copy(out)
    keyed.out_dir = ""
    try:
        data = pickle.dumps(keyed)
    except Exception as exc:
        raise config.error(f"executor = {config.executor!r} sends the config to worker processes, but it holds an "
                           f"object that cannot be sent ({type(exc).__name__}: {exc}); give llm as a spec string "
                           "such as 'embedded' or 'ollama:<model>', or use executor = 'serial'") from None
    return out, hashlib.sha256(data).hexdigest()


def _relpath(unit: Any, config: Any) -> str:
    if unit.path is None:
        raise config.error(f"unit {unit.label!r} has no run file, so it cannot run in a worker; use executor = 'serial'")
    try:
        return str(Path(unit.path).resolve().relative_to(Path(config.out_dir).resolve()))
    except ValueError:
        raise config.error(f"unit {unit.label!r}: its run file {unit.path} is not under out_dir {config.out_dir}, so "
                           "a worker cannot mirror it; use executor = 'serial'") from None


def _task(experiment: Any, config: Any, wconfig: Any, key: str, unit: Any, index: int, hosts: Sequence[str],
          snapshot_id: str) -> Task:
    """The task of ``unit``: its journal so far (none with ``overwrite``) and the finished journals it reads."""
    path = Path(unit.path) if unit.path is not None else None
    journal = path.read_bytes() if path is not None and path.is_file() and not config.overwrite else None
    needs = {}
    for need in unit.spec.get("needs", ()):
        need = Path(need)
        if need.is_file():
            needs[str(need.resolve().relative_to(Path(config.out_dir).resolve()))] = need.read_bytes()
    return Task(experiment, wconfig, key, unit, index, _relpath(unit, config), journal, needs, tuple(hosts),
                snapshot_id)


def run_remote(experiment: Any, config: Any, context: Any, units: Sequence[Any], executor: Any, pool: Any,
               on_done: Callable[[Any, Any, Outcome], None]) -> dict[tuple, Any]:
    """Run ``units`` on ``executor`` stage by stage; as each finishes, write its journal, merge its completions,
    note its host in ``pool`` (or None), load its record and call ``on_done(unit, record, outcome)``. Returns the
    records keyed and ordered as the units."""
    wconfig, key = worker_config(config)
    load = copy.copy(config)
    load.overwrite, load.progress = False, False  # the journal is finished: reading it asks nothing
    index = {unit.key: i for i, unit in enumerate(units)}
    records: dict[tuple, Any] = {}
    with tempfile.TemporaryDirectory(prefix="ul-run-") as folder, executor:
        snapshot = take_snapshot(Path(folder))
        shared = executor.share(snapshot)
        for stage in stages(units):
            by_key = {unit.key: unit for unit in stage}
            tasks = [_task(experiment, config, wconfig, key, unit, index[unit.key],
                           pool.order(index[unit.key]) if pool is not None else (), snapshot.id) for unit in stage]
            failures = []
            for outcome in executor.run(tasks, shared):
                unit = by_key[outcome.key]
                if outcome.journal:
                    write_atomic(Path(unit.path), outcome.journal)
                merge_rows(outcome.rows)
                if outcome.error is not None:  # kept what it finished; reported once the stage's others are in
                    failures.append(unit_failed(unit.label, unit.path, outcome.error, outcome.worker))
                    continue
                if pool is not None and outcome.host is not None:
                    from ..llm.pool import Served

                    pool.record(unit.label, Served(outcome.host, outcome.failed, outcome.seconds))
                records[unit.key] = experiment.run_unit(unit, load, context)
                on_done(unit, records[unit.key], outcome)
            if failures:
                if len(failures) > 1:
                    raise type(failures[0])(f"{len(failures)} units failed; the first: {failures[0]}") from None
                raise failures[0]
    return {unit.key: records[unit.key] for unit in units}
