"""The errors of the language-model layer: each message says what failed and what to do about it."""

from __future__ import annotations


class LLMError(RuntimeError):
    """A language-model backend could not answer; the message says why and what to do."""


class LLMUnavailableError(LLMError):
    """The backend itself cannot run here (server down, model or package missing)."""


class LLMCapabilityError(LLMError):
    """The backend runs but cannot do what was asked (e.g. logprobs)."""
