"""Where an experiment's units run: ``serial`` (this process), ``processes`` (a local pool) or ``dask``
(``dask.distributed``: a LocalCluster or a running cluster), with the same results whatever runs them.
:class:`Plan` is what :meth:`uncertainty_lab.lab.Experiment.run` uses; ``docs/scale-out.md`` shows the settings."""

from .plan import EXECUTORS, Plan, check_settings, make_executor
from .task import Outcome, Task, run_task

__all__ = ["EXECUTORS", "Outcome", "Plan", "Task", "check_settings", "make_executor", "run_task"]
