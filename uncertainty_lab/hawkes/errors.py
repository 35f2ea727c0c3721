"""The Hawkes engine's errors: each names the argument at fault and the fix."""

from __future__ import annotations


class HawkesError(ValueError):
    """Base class of the Hawkes engine's errors (a ``ValueError``)."""


class EventStreamError(HawkesError):
    """An event stream that is not a valid realisation: unsorted, tied, non-finite or out of range."""


class UnstableModelError(HawkesError):
    """A model with spectral radius ρ(G) ≥ 1 asked to do what only a stable model can."""


class UnstableFitError(HawkesError):
    """No candidate in a fit was stable; ``.table`` and ``.candidates`` keep everything computed."""

    def __init__(self, message: str, *, table=None, candidates=None):
        super().__init__(message)
        self.table = table
        self.candidates = candidates
