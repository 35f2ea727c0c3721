"""Deprecated alias of uncertainty_lab.cascade.run and .record (moved to run.py and record.py); removed in 0.3."""
from .record import FORMAT, CascadeResumeError, CascadeRun, CascadeStep  # noqa: F401
from .run import generate_step, simulate_cascade, step_seeds  # noqa: F401
