"""The ``dask`` executor: units as tasks on a ``dask.distributed`` cluster — a ``LocalCluster`` of worker processes
started for the run, or the running cluster at ``scheduler`` (``tcp://host:8786``: one started with
``dask scheduler`` / ``dask worker``, dask-jobqueue, dask-kubernetes or an SSH cluster; every worker needs this
package installed).

The main process's cache snapshot is sent to the workers once (``scatter``, broadcast). A task whose worker dies
is rescheduled by the scheduler on another worker (up to ``distributed.scheduler.allowed-failures`` times, 3 by
default, then ``KilledWorker``); a task that raises is not retried, since a lab's error repeats wherever it runs.
A LocalCluster's workers keep their scratch and temporary files in one folder the main process makes and removes,
so a worker that was killed leaves nothing behind (the workers of a cluster at ``scheduler`` keep theirs where that
cluster puts them).
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator, Sequence
from typing import Any

from .shipping import Snapshot
from .task import Outcome, Task, run_task

__all__ = ["DaskExecutor", "local_cluster"]


def _distributed() -> Any:
    try:
        import distributed
    except ImportError as exc:
        raise ValueError(f"executor = 'dask' needs dask.distributed ({exc}); pip install 'dask[distributed]'") from None
    return distributed


def local_cluster(workers: int, folder: str) -> Any:
    """A LocalCluster of ``workers`` single-threaded processes whose scratch and temporary files (the scheduler's
    too) go into ``folder``; no dashboard."""
    return _distributed().LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                                       silence_logs=logging.CRITICAL, local_directory=folder, env={"TMPDIR": folder},
                                       scheduler_kwargs={"local_directory": folder})


class DaskExecutor:
    """Runs tasks on the dask cluster at ``scheduler``, or on a LocalCluster of ``workers`` processes (one thread
    each; None: the CPU count) started for the run and closed after it."""

    name = "dask"

    def __init__(self, workers: int | None = None, scheduler: str | None = None):
        self.workers = workers or os.cpu_count() or 1
        self.scheduler = scheduler
        self.cluster: Any = None
        self.client: Any = None
        self._scratch: str | None = None

    def __enter__(self) -> DaskExecutor:
        distributed = _distributed()
        if self.scheduler:
            try:
                self.client = distributed.Client(self.scheduler, timeout="20s")
            except OSError as exc:
                raise ValueError(f"no dask scheduler answers at {self.scheduler} ({exc}); start one with `dask "
                                 "scheduler` (and workers with `dask worker <address>`), or drop scheduler to run on "
                                 "a LocalCluster") from None
        else:
            self._scratch = tempfile.mkdtemp(prefix="ul-dask-")
            self.cluster = local_cluster(self.workers, self._scratch)
            self.client = distributed.Client(self.cluster)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.client is not None:
            self.client.close()
        if self.cluster is not None:
            self.cluster.close()
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
        self.client = self.cluster = self._scratch = None

    def describe(self) -> str:
        if self.scheduler:
            return f"the dask cluster at {self.scheduler}"
        return f"a dask LocalCluster of {self.workers} worker process{'es' if self.workers != 1 else ''}"

    def share(self, snapshot: Snapshot) -> Any:
        """The snapshot's bytes on every worker, sent once."""
        data = snapshot.payload()
        return None if data is None else self.client.scatter(data, broadcast=True, hash=False)

    def run(self, tasks: Sequence[Task], shared: Any) -> Iterator[Outcome]:
        """Each task's outcome as it finishes (the first task error is raised here; the rest are cancelled)."""
        distributed = _distributed()
        batch = uuid.uuid4().hex[:8]
        futures = [self.client.submit(run_task, task, shared, key=f"ul-unit-{batch}-{i}", pure=False)
                   for i, task in enumerate(tasks)]
        try:
            for future in distributed.as_completed(futures):
                yield future.result()
        finally:
            self.client.cancel([f for f in futures if not f.done()])
