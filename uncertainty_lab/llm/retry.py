"""Bounded retries of a model call that failed (an HTTP error, a malformed reply, a timeout, a broken connection):
a failure is never an answer. The call is tried ``attempts`` times in all, waiting ``delay · 2^k`` seconds before
retry k+1; then :class:`ModelCallFailed` is raised with the last error (which names the host), and the lab's unit
fails loudly — its journal keeps what finished before, a rerun redoes the rest.

``UL_LLM_ATTEMPTS`` (default 3) and ``UL_LLM_RETRY_DELAY`` (seconds, default 1.0; 0 in tests: no wait) set them,
read at each call so worker processes follow the main process's environment.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from .errors import LLMCapabilityError, LLMError

__all__ = ["ModelCallFailed", "attempts", "call_with_retries", "retry_delay"]


class ModelCallFailed(LLMError):
    """A model call failed on every attempt; the message names the call, the attempts and the last error. (The
    error raised is of the last error's own class when that is an LLMError subclass, so a caller that tells a
    server that is down from one that answered badly still can; this class is for other callers' use.)"""


def _env_number(name: str, default: float, kind: type) -> Any:
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = kind(text)
    except ValueError:
        raise ValueError(f"${name} must be a number, got {text!r}") from None
    if value < 0:
        raise ValueError(f"${name} must not be negative, got {text!r}")
    return value


def attempts() -> int:
    """How many times a failing model call is tried in all (``$UL_LLM_ATTEMPTS``, default 3, at least 1)."""
    return max(1, _env_number("UL_LLM_ATTEMPTS", 3, int))


def retry_delay() -> float:
    """Seconds before the first retry, doubled before each next (``$UL_LLM_RETRY_DELAY``, default 1.0)."""
    return float(_env_number("UL_LLM_RETRY_DELAY", 1.0, float))


def _same_kind(exc: LLMError, message: str) -> LLMError:
    """An error of ``exc``'s class (a plain LLMError: :class:`ModelCallFailed`) saying ``message``."""
    if type(exc) is not LLMError:
        try:
            return type(exc)(message)
        except TypeError:  # a subclass whose constructor takes other arguments
            pass
    return ModelCallFailed(message)


def call_with_retries(fn: Callable[[], Any], what: str, *, sleep: Callable[[float], None] = time.sleep) -> Any:
    """``fn()``, retried on an :class:`LLMError` (not a missing capability: asking again cannot help) up to
    :func:`attempts` times with doubling waits; then :class:`ModelCallFailed` "``what`` failed after N attempts:
    <last error>" (of the last error's class). An error that is not an LLMError (a bug, Ctrl-C, a pool's host failover) passes at once."""
    n, delay = attempts(), retry_delay()
    for k in range(n):
        try:
            return fn()
        except LLMCapabilityError:
            raise
        except LLMError as exc:
            if k + 1 == n:
                if n == 1:
                    raise
                raise _same_kind(exc, f"{what} failed after {n} attempts: {exc}") from exc
            if delay > 0:
                sleep(delay * 2 ** k)
    raise AssertionError("unreachable")
