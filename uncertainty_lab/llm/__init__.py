"""Language models behind one protocol: ``complete(messages, n=..., seed=...) -> list[Completion]``.

Backends are ``llm_backends`` plugins (``embedded``, ``ollama``, ``replay``); every completion goes
through one SQLite cache."""

from .base import (
    Completion,
    LLMBackend,
    LLMCapabilityError,
    LLMError,
    LLMUnavailableError,
    TokenLogprob,
    identity,
    sample_seed,
)
from .cache import CacheError, CacheWarning, CompletionCache, cache_dir, default_cache
from .select import as_backend, check_ready, get_llm, ready_backend

__all__ = [
    "CacheError",
    "CacheWarning",
    "Completion",
    "CompletionCache",
    "LLMBackend",
    "LLMCapabilityError",
    "LLMError",
    "LLMUnavailableError",
    "TokenLogprob",
    "as_backend",
    "cache_dir",
    "check_ready",
    "default_cache",
    "get_llm",
    "identity",
    "ready_backend",
    "sample_seed",
]
