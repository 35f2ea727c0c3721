"""One unit as a worker runs it: what the main process sends (:class:`Task`), what comes back (:class:`Outcome`),
and :func:`run_task`, the function a process pool or a dask worker calls.

The worker builds the lab's shared context once per process (``prepare``, memoised by the config), writes the
unit's journal so far (and the finished journals it reads, ``needs``) into a folder of its own, runs the lab's
``run_unit`` there — so a half-finished unit resumes exactly where it was cut — with its own completion cache
(:mod:`.shipping`), and returns the finished journal's bytes and the cache rows it added. It writes nothing
outside its own folders: the main process owns the journals and the cache.
"""

from __future__ import annotations

import atexit
import copy
import dataclasses
import os
import shutil
import socket
import tempfile
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..llm.errors import LLMError
from .shipping import rows_after, use_worker_cache

__all__ = ["Outcome", "Task", "UnitFailed", "run_task", "unit_failed"]

#: contexts a worker process keeps (a long-lived dask worker serves many runs)
KEEP_CONTEXTS = 4


@dataclass(frozen=True)
class Task:
    """A unit sent to a worker: the lab's ``experiment`` and ``config`` (run-only settings neutralised), the
    ``context_key`` its context is memoised by, the ``unit`` and its ``index`` in the run, ``relpath`` (its journal
    relative to ``out_dir``), the ``journal`` bytes so far (None: start afresh), ``needs`` (finished journals it
    reads, by relative path), the ``hosts`` to try in order (empty: no pool) and the cache ``snapshot_id``."""

    experiment: Any
    config: Any
    context_key: str
    unit: Any
    index: int
    relpath: str
    journal: bytes | None = None
    needs: dict[str, bytes] = field(default_factory=dict)
    hosts: tuple[str, ...] = ()
    snapshot_id: str = ""


@dataclass
class Outcome:
    """A finished unit: its ``key``, the ``journal`` bytes, the cache ``rows`` added, the ``host`` that served it
    and the hosts that ``failed`` on the way (a pool), the ``seconds`` it took and the ``worker`` (host:pid); ``error``:
    the unit failed with a model error (after its retries), ``journal`` then holds what it finished before."""

    key: Any
    journal: bytes
    rows: list[tuple]
    host: str | None = None
    failed: list[tuple[str, str]] = field(default_factory=list)
    seconds: float = 0.0
    worker: str = ""
    error: str | None = None


class UnitFailed(LLMError):
    """A unit's model calls failed (after their retries): the run stops with the unit, the error and the host named;
    the unit's journal keeps what finished before, and a rerun redoes the rest."""


def unit_failed(label: str, path: Any, error: str, where: str = "") -> UnitFailed:
    """The error for unit ``label`` (journal ``path``) that failed with ``error`` (``where``: the worker)."""
    kept = f"Its journal {path} keeps what finished before it" if path is not None else "nothing was journalled"
    return UnitFailed(f"unit {label!r} failed{f' on {where}' if where else ''}: {error}. {kept}; rerun the same "
                      "command to redo the unfinished part once the model server answers")


_contexts: OrderedDict[tuple, Any] = OrderedDict()


def _context(task: Task) -> Any:
    """The lab's shared context for this config, built once per process (under the pool's first host)."""
    key = (type(task.experiment).__module__, type(task.experiment).__qualname__, task.context_key)
    if key not in _contexts:
        def prepare() -> Any:
            return task.experiment.prepare(task.config)

        if task.hosts:
            from ..llm.pool import serve

            context, _ = serve(prepare, task.hosts)
        else:
            context = prepare()
        _contexts[key] = context
        while len(_contexts) > KEEP_CONTEXTS:
            _contexts.popitem(last=False)
    _contexts.move_to_end(key)
    return _contexts[key]


_scratch = threading.local()


def _scratch_root() -> Path:
    """This thread's folder for the units it runs, made once (making and removing folders per unit costs more
    than a unit's bookkeeping on some filesystems); the files a unit wrote are removed after it."""
    root = getattr(_scratch, "root", None)
    if root is None:
        root = _scratch.root = Path(tempfile.mkdtemp(prefix="ul-units-"))
        atexit.register(shutil.rmtree, root, ignore_errors=True)
    return root


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _run(task: Task, unit: Any, config: Any, context: Any) -> tuple[str | None, list[tuple[str, str]]]:
    """The lab's ``run_unit``, served by the task's hosts when it has some: ``(host, hosts that failed)``."""
    if not task.hosts:
        task.experiment.run_unit(unit, config, context)
        return None, []
    from ..llm.pool import serve

    _, served = serve(lambda: task.experiment.run_unit(unit, config, context), task.hosts)
    return served.host, served.failed


def run_task(task: Task, snapshot: str | os.PathLike | bytes | None = None) -> Outcome:
    """Run ``task``'s unit in this process (see the module doc); ``snapshot`` is the main cache's export (its path
    on a shared disk, or its bytes), merged into this process's cache once per run."""
    start = time.perf_counter()
    mark = use_worker_cache(task.snapshot_id, snapshot)
    context = _context(task)
    root = _scratch_root()
    files = [root / rel for rel in task.needs] + [root / task.relpath]
    try:
        for rel, data in task.needs.items():
            _write(root / rel, data)
        path = root / task.relpath
        path.unlink(missing_ok=True)
        if task.journal is not None:
            _write(path, task.journal)
        config = copy.copy(task.config)
        config.out_dir = str(root)
        error = None
        try:
            host, failed = _run(task, dataclasses.replace(task.unit, path=path), config, context)
        except LLMError as exc:  # reported to the main process with the journal so far, never swallowed
            host, failed, error = None, [], f"{type(exc).__name__}: {exc}"
        journal = path.read_bytes() if path.is_file() else b""
    finally:
        for file in files:
            file.unlink(missing_ok=True)
    return Outcome(task.unit.key, journal, rows_after(mark), host, failed, time.perf_counter() - start,
                   f"{socket.gethostname()}:{os.getpid()}", error)
