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
import socket
import tempfile
import uuid
from collections.abc import Iterator, Sequence
from typing import Any

from ..untrusted import excerpt
from .shipping import Snapshot
from .task import Outcome, Task, run_task

__all__ = ["DaskExecutor", "local_cluster", "probe_scheduler"]

#: seconds a ``tcp://`` scheduler address gets to accept a connection, and then to send dask's opening handshake
#: (``distributed.Client`` itself can wait forever on a host that accepts and never speaks)
PROBE_TIMEOUT = 5.0
_SCHEDULER_FIX = ("start one with `dask scheduler` (and workers with `dask worker <address>`), check the address and "
                  "port (the scheduler's, 8786 by default, not its dashboard's), or drop scheduler to run on a "
                  "LocalCluster")


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


def probe_scheduler(address: str, timeout: float | None = None) -> None:
    """Before ``distributed.Client`` connects: a ``tcp://`` scheduler must accept a connection and send its opening
    handshake (a dask scheduler speaks first) within ``timeout`` seconds each, else a ValueError naming the address
    and the fix. Other schemes (``tls://``, where the client speaks first; ``inproc://``) are left to the client."""
    from distributed.comm.addressing import get_address_host_port, parse_address

    timeout = timeout or PROBE_TIMEOUT
    shown = excerpt(str(address), 120)
    try:
        scheme, _ = parse_address(address)
        host, port = get_address_host_port(address) if scheme == "tcp" else (None, None)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"scheduler {shown} is not a dask address such as tcp://host:8786 ({exc})") from None
    if scheme != "tcp":
        return
    try:
        conn = socket.create_connection((host, port), timeout=timeout)
    except TimeoutError:
        raise ValueError(f"the dask scheduler at {shown} did not accept a connection within {timeout} s; "
                         f"{_SCHEDULER_FIX}") from None
    except OSError as exc:
        raise ValueError(f"no dask scheduler answers at {shown} ({exc.strerror or exc}); {_SCHEDULER_FIX}") from None
    with conn:
        conn.settimeout(timeout)
        try:
            first = conn.recv(1)
        except TimeoutError:
            raise ValueError(f"something at {shown} accepts connections but sent nothing within {timeout} s, so it "
                             f"is not a dask scheduler; {_SCHEDULER_FIX}") from None
        except OSError as exc:
            first, why = b"", exc.strerror or str(exc)
        else:
            why = "it closed the connection"
        if not first:
            raise ValueError(f"something at {shown} accepts connections but does not speak dask's protocol ({why}); "
                             f"{_SCHEDULER_FIX}")


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
            probe_scheduler(self.scheduler)
            try:
                self.client = distributed.Client(self.scheduler, timeout="20s")
            except OSError as exc:
                raise ValueError(f"no dask scheduler answers at {excerpt(str(self.scheduler), 120)} ({exc}); "
                                 f"{_SCHEDULER_FIX}") from None
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
