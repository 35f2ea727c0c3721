"""Deprecated alias of :mod:`uncertainty_lab.search.record` (moved to ``record.py`` and ``scoring.py``); removed in 0.3."""

from .record import FORMAT, Episode, EpisodeError, EpisodeResumeError, SearchStep, step_seed  # noqa: F401
from .scoring import EpisodeScore, token_f1  # noqa: F401
