"""The orchestration lab's errors: a coordinator, a config or a run file that cannot work as given, and a run
file that belongs to another configuration (so resuming it would mix two experiments)."""

from __future__ import annotations

__all__ = ["OrchestrationError", "OrchestrationResumeError"]


class OrchestrationError(ValueError):
    """A coordinator or run that cannot work as configured; the message says what to change."""


class OrchestrationResumeError(OrchestrationError):
    """An existing run file belongs to a different configuration."""
