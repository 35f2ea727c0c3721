"""The language-model protocol every backend follows, and the cached ``complete`` they share."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

import numpy as np

from .cache import CacheError, CompletionCache, default_cache, request_key, warn_once
from .errors import LLMCapabilityError, LLMError, LLMUnavailableError
from .record import completion_problem
from .request_log import log_request
from .retry import call_with_retries

Messages = Sequence[dict[str, str]] | str
ROLES = ("system", "user", "assistant")
__all__ = ["Completion", "LLMBackend", "LLMCapabilityError", "LLMError", "LLMUnavailableError", "TokenLogprob",
           "identity", "normalise_messages", "sample_seed"]


@dataclass(frozen=True)
class TokenLogprob:
    """One generated token with its log-probability and the most likely alternatives."""

    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class Completion:
    """One sampled answer: text, per-token logprobs when asked and supported, and provenance."""

    text: str
    finish_reason: str
    backend: str
    model: str
    seed: int | None
    index: int = 0
    logprobs: tuple[TokenLogprob, ...] | None = None
    cached: bool = False

    @property
    def sequence_logprob(self) -> float | None:
        """log p(s|x) = Σ_t log p(token_t | ...), or None without logprobs."""
        return None if self.logprobs is None else float(sum(t.logprob for t in self.logprobs))

    def to_record(self) -> dict[str, Any]:
        rec = asdict(self)
        rec.pop("cached")
        return rec

    @classmethod
    def from_record(cls, rec: dict[str, Any], *, cached: bool) -> Completion:
        """The completion a cache row stores; ``ValueError`` naming what is wrong with a damaged record."""
        problem = completion_problem(rec)
        if problem:
            raise ValueError(problem)
        lp = rec.get("logprobs")
        if lp is not None:
            lp = tuple(TokenLogprob(t["token"], t["logprob"], tuple(tuple(a) for a in t.get("top", ()))) for t in lp)
        return cls(
            text=rec["text"], finish_reason=rec["finish_reason"], backend=rec["backend"], model=rec["model"],
            seed=rec["seed"], index=rec.get("index", 0), logprobs=lp, cached=cached,
        )


def sample_seed(seed: int, index: int) -> int:
    """The seed of sample ``index`` of a request seeded with ``seed``: an independent stream per
    sample from NumPy's SeedSequence, so sample i does not depend on how many were asked for."""
    return int(np.random.SeedSequence([seed, index]).generate_state(1, np.uint32)[0] & 0x7FFFFFFF)


def identity(llm: Any) -> dict[str, str]:
    """``{"backend", "model"}`` of a backend, as its cache keys name them (run journals record it, so a resumed
    run can tell a changed model); any object with ``complete`` works (``name`` / ``model`` attributes)."""
    backend = llm.cache_backend_name() if callable(getattr(llm, "cache_backend_name", None)) \
        else getattr(llm, "name", type(llm).__name__)
    model = llm.model_id() if callable(getattr(llm, "model_id", None)) else str(getattr(llm, "model", ""))
    return {"backend": str(backend), "model": str(model)}


def normalise_messages(messages: Messages) -> list[dict[str, str]]:
    """Accept a plain string (one user turn) or a list of ``{"role", "content"}`` dicts."""
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    out = []
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or "role" not in m or "content" not in m:
            raise ValueError(f"messages[{i}] must be a dict with 'role' and 'content', got {m!r}")
        if m["role"] not in ROLES:
            raise ValueError(f"messages[{i}]['role'] must be one of {ROLES}, got {m['role']!r}")
        if not isinstance(m["content"], str):
            raise ValueError(f"messages[{i}]['content'] must be a string, got {type(m['content']).__name__}")
        out.append({"role": m["role"], "content": m["content"]})
    if not out:
        raise ValueError("messages is empty; pass a string or at least one {'role': 'user', 'content': ...}")
    return out


def _check_sampling(n, temperature, top_p, max_tokens, seed, stop) -> None:
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"n must be a positive integer (number of samples), got {n!r}")
    if not 0.0 <= float(temperature) <= 5.0:
        raise ValueError(f"temperature must be in [0, 5], got {temperature!r}")
    if not 0.0 < float(top_p) <= 1.0:
        raise ValueError(f"top_p must be in (0, 1], got {top_p!r}")
    if not isinstance(max_tokens, int) or max_tokens < 1:
        raise ValueError(f"max_tokens must be a positive integer, got {max_tokens!r}")
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool) or seed < 0):
        raise ValueError(f"seed must be a non-negative integer or None, got {seed!r}")
    if stop is not None and (isinstance(stop, str) or not all(isinstance(s, str) for s in stop)):
        raise ValueError(f"stop must be a list of strings or None, got {stop!r}")


@dataclass
class LLMBackend:
    """Base of every ``llm_backends`` plugin. Subclasses implement :meth:`model_id` and
    :meth:`_generate` (one sample, one seed); caching, seeds and validation live here."""

    name: ClassVar[str] = "base"
    summary: ClassVar[str] = ""
    supports_logprobs: ClassVar[bool] = False
    #: whether a class recording needs this backend's answers (``$UL_REQUEST_LOG``); a backend that answers the same
    #: everywhere with no model (a world) does not
    recorded: ClassVar[bool] = True
    cache: CompletionCache | None = field(default=None, repr=False, compare=False, metadata={"hidden": True})

    def model_id(self) -> str:
        raise NotImplementedError

    def _generate(self, messages: list[dict[str, str]], *, temperature: float, top_p: float,
                  max_tokens: int, seed: int, stop: list[str] | None, logprobs: bool) -> dict[str, Any]:
        """Return ``{"text", "finish_reason", "logprobs"}`` for one sample."""
        raise NotImplementedError

    def _generate_sample(self, messages: list[dict[str, str]], *, index: int, **kwargs: Any) -> dict[str, Any]:
        """Sample ``index`` of a request: :meth:`_generate`, unless a backend shares work between the samples of
        one prompt (the embedded backend reuses the prompt's KV cache for samples after the first)."""
        return self._generate(messages, **kwargs)

    @property
    def label(self) -> str:
        return f"{self.name}:{self.model_id()}"

    def complete(self, messages: Messages, *, n: int = 1, temperature: float = 0.7, top_p: float = 0.95,
                 max_tokens: int = 128, seed: int | None = 0, stop: list[str] | None = None,
                 logprobs: bool = False, use_cache: bool = True) -> list[Completion]:
        """Sample ``n`` completions. Sample i uses ``sample_seed(seed, i)``; each is looked up in the
        cache first. ``seed=None`` draws fresh randomness and bypasses the cache."""
        msgs = normalise_messages(messages)
        _check_sampling(n, temperature, top_p, max_tokens, seed, stop)
        self._check_logprobs(logprobs)
        cache = self._cache() if use_cache and seed is not None else None
        base_seed = seed if seed is not None else secrets.randbelow(2**31)
        params = {"temperature": float(temperature), "top_p": float(top_p), "max_tokens": max_tokens,
                  "stop": list(stop) if stop else None, "logprobs": bool(logprobs)}
        out = []
        for i in range(n):
            request = {"backend": self.cache_backend_name(), "model": self.model_id(), "messages": msgs,
                       "params": params, "seed": base_seed, "index": i}
            out.append(self._one(request, cache, sample_seed(base_seed, i)))
        return out

    def cache_backend_name(self) -> str:
        return self.name

    def _cache(self) -> CompletionCache | None:
        """This backend's cache, or None (warning once) when the default cache cannot be opened."""
        if self.cache is not None:
            return self.cache
        try:
            return default_cache()
        except CacheError as exc:
            warn_once(f"{exc} (the run goes on uncached)", stacklevel=4)
            return None

    def _check_logprobs(self, logprobs: bool) -> None:
        if logprobs and not self.supports_logprobs:
            raise LLMCapabilityError(f"backend {self.name!r} cannot return logprobs; use the embedded backend")

    def _one(self, request: dict[str, Any], cache: CompletionCache | None, seed: int) -> Completion:
        key = request_key(request)
        if self.recorded:  # only with $UL_REQUEST_LOG set (a recording)
            log_request(request, key if cache is not None else None)
        hit = _lookup(cache, key)
        if hit is not None:
            return hit
        p = request["params"]
        raw = call_with_retries(  # a failure is never an answer: retried, then raised (llm/retry.py)
            lambda: self._generate_sample(request["messages"], index=request["index"], temperature=p["temperature"],
                                          top_p=p["top_p"], max_tokens=p["max_tokens"], seed=seed, stop=p["stop"],
                                          logprobs=p["logprobs"]),
            f"a request to {self.label}")
        completion = Completion(
            text=raw["text"], finish_reason=raw.get("finish_reason") or "stop", backend=request["backend"],
            model=request["model"], seed=request["seed"], index=request["index"], logprobs=raw.get("logprobs"),
        )
        if cache is not None:
            try:
                cache.put(key, request, completion.to_record())
            except CacheError as exc:  # unwritable, full, damaged meanwhile: the answer stands, uncached
                warn_once(f"{exc} (the run goes on uncached)", stacklevel=4)
        return completion


def _lookup(cache: CompletionCache | None, key: str) -> Completion | None:
    """The cached completion for ``key``, or None: a miss, a cache that cannot be read (warning once) or a
    damaged row (warning; the new answer replaces it)."""
    if cache is None:
        return None
    try:
        rec = cache.get(key)
    except CacheError as exc:
        warn_once(f"{exc} (the run goes on uncached)", stacklevel=5)
        return None
    if rec is None:
        return None
    try:
        return Completion.from_record(rec, cached=True)
    except ValueError as exc:
        cache.discard(key, str(exc))
        return None
