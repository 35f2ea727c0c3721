"""The ``processes`` executor: a pool of local worker processes (``spawn``: a fresh interpreter each, so nothing
the main process loaded — a model, a thread — is shared by accident). A worker that dies breaks the pool; the
units it held are re-run on a new pool (at most :data:`MAX_ATTEMPTS` times each), so nothing is lost, and since
the main process writes a journal only from a finished unit, nothing is written twice. The workers' temporary
files live in one folder the main process makes and removes, so a worker that was killed leaves nothing behind."""

from __future__ import annotations

import multiprocessing
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from .shipping import Snapshot
from .task import Outcome, Task, run_task

__all__ = ["MAX_ATTEMPTS", "ProcessExecutor", "WorkerLost"]

#: how often a unit is sent again after its worker process died
MAX_ATTEMPTS = 3


class WorkerLost(RuntimeError):
    """A unit's worker process died :data:`MAX_ATTEMPTS` times."""


class ProcessExecutor:
    """Runs tasks on ``workers`` local processes (None: the CPU count)."""

    name = "processes"

    def __init__(self, workers: int | None = None):
        self.workers = workers or os.cpu_count() or 1
        self._pool: ProcessPoolExecutor | None = None
        self._scratch: str | None = None

    def __enter__(self) -> ProcessExecutor:
        self._scratch = tempfile.mkdtemp(prefix="ul-processes-")
        self._pool = self._new_pool()
        return self

    def __exit__(self, kind: Any, *exc: Any) -> None:
        """Shut the pool down; after an error or Ctrl-C its workers are stopped at once rather than waited for (the
        journals of the finished units are kept, a rerun resumes)."""
        if self._pool is not None:
            processes = list((getattr(self._pool, "_processes", None) or {}).values())
            if kind is not None:
                for process in processes:
                    process.terminate()
            self._pool.shutdown(wait=kind is None, cancel_futures=True)
            for process in processes:  # a terminated worker is gone before its folder is removed
                process.join(timeout=5)
            self._pool = None
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None

    def describe(self) -> str:
        return f"{self.workers} local worker process{'es' if self.workers != 1 else ''}"

    def _new_pool(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(max_workers=self.workers, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=_use_temp_dir, initargs=(self._scratch,))

    def share(self, snapshot: Snapshot) -> str | None:
        """The workers read the snapshot from the same disk."""
        return None if snapshot.path is None else str(snapshot.path)

    def run(self, tasks: Sequence[Task], shared: Any) -> Iterator[Outcome]:
        """Each task's outcome as it finishes; a task's error is raised here. When a worker dies, the tasks the
        pool held and had not finished are sent again to a new pool."""
        attempts = dict.fromkeys(range(len(tasks)), 0)
        pending: dict[Future, int] = {}

        def submit(i: int) -> None:
            attempts[i] += 1
            pending[self._pool.submit(run_task, tasks[i], shared)] = i

        for i in range(len(tasks)):
            submit(i)
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            lost: list[int] = []
            yield from _finished(done, pending, lost)
            if lost:  # the pool is broken: every other pending future ends now, finished or lost
                wait(pending)
                yield from _finished(list(pending), pending, lost)
                self._restart(tasks, lost, attempts)
                for i in sorted(lost):
                    submit(i)

    def _restart(self, tasks: Sequence[Task], lost: list[int], attempts: dict[int, int]) -> None:
        over = [i for i in lost if attempts[i] >= MAX_ATTEMPTS]
        if over:
            raise WorkerLost(f"the worker process running {tasks[over[0]].unit.label!r} died {MAX_ATTEMPTS} times; "
                             "the journals of the finished units are kept: rerun to resume. A script that starts a "
                             "run must do it under `if __name__ == '__main__':` (each worker imports it); "
                             "executor = 'serial' shows any other error in this process")
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._pool = self._new_pool()


def _use_temp_dir(folder: str) -> None:
    """A worker's temporary files go into the executor's folder (see the module doc)."""
    tempfile.tempdir = folder


def _finished(futures: Any, pending: dict[Future, int], lost: list[int]) -> Iterator[Outcome]:
    """The outcomes of finished ``futures`` (removed from ``pending``); those a dead worker held go to ``lost``."""
    for future in futures:
        i = pending.pop(future)
        try:
            outcome = future.result()
        except BrokenProcessPool:
            lost.append(i)
            continue
        yield outcome
