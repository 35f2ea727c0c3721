"""The replay backend: answers only from a recorded cache (an instructor's export, a test fixture): the class
recording in ``$UL_REPLAY_DIR`` when set (read-only, shared by a class server's students), else the completion cache.
A miss in a notebook mode the recording does not hold (``UL_FAST``; :mod:`.modes`) says which mode to replay in."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import ClassVar

from .base import Completion, LLMBackend, LLMError
from .cache import CacheError, replay_cache, request_key
from .modes import current_mode, mismatch, unknown_hint


class ReplayMissError(LLMError, LookupError):
    """The replay cache holds no answer for this request."""


@dataclass
class ReplayLLM(LLMBackend):
    """Replays completions recorded by another backend; never generates. A miss is an error naming the request."""

    name: ClassVar[str] = "replay"
    summary: ClassVar[str] = "answers only from a recorded completion cache (offline classroom replay)"
    supports_logprobs: ClassVar[bool] = True

    backend: str = field(default="embedded", metadata={"help": "the backend that recorded the answers"})
    model: str = field(default="", metadata={"help": "the recorded model id; empty = the only one recorded"})

    def _store(self):
        with _readable():
            return self.cache if self.cache is not None else replay_cache()

    def model_id(self) -> str:
        if self.model:
            return self.model
        with _readable():
            recorded = [m for _, m in self._store().models(self.backend)]
        if len(recorded) != 1:
            raise LLMError(
                f"replay needs model=...: the cache at {self._store().path} holds "
                + (f"{len(recorded)} models for backend {self.backend!r}: {recorded}" if recorded
                   else f"no answers from backend {self.backend!r} (import an export with `uncertainty-lab cache import FILE`)")
            )
        self.model = recorded[0]
        return self.model

    def cache_backend_name(self) -> str:
        return self.backend

    def complete(self, messages, *, seed: int | None = 0, use_cache: bool = True, **kwargs) -> list[Completion]:
        if seed is None or not use_cache:
            raise ValueError("replay answers only recorded, seeded requests: pass an integer seed and use_cache=True")
        return super().complete(messages, seed=seed, **kwargs)

    def _cache(self):
        return None  # replay reads its store in _one, where a cache fault is an error, not a warning

    def _one(self, request, cache, seed):
        store = self._store()
        with _readable():
            hit = store.get(request_key(request))
        what = (f"{request['backend']}:{request['model']} sample {request['index']} (seed={request['seed']}, "
                f"params={request['params']}) to {request['messages'][-1]['content'][:80]!r}")
        if hit is None:
            raise ReplayMissError(_miss(store, what, request["backend"]))
        try:
            return Completion.from_record(hit, cached=True)
        except ValueError as exc:
            raise ReplayMissError(
                f"the recorded answer for {what} in {store.path} is damaged ({exc}); import a good export with "
                "`uncertainty-lab cache import FILE`, or record it again"
            ) from None


def _miss(store, what: str, backend: str) -> str:
    """The one line a miss raises: the mode to replay in when the recording holds the other mode's answers only;
    else the request and how to record it, with the mode hint unless the cache holds answers of this mode only."""
    try:
        recorded = store.modes() if callable(getattr(store, "modes", None)) else frozenset()
    except CacheError:
        recorded = frozenset()
    mode = current_mode()
    line = mismatch(recorded, mode)
    if line:
        return f"{line}; first request not recorded: {what}"
    text = (f"no recorded answer for {what}; record it first with get_llm({backend!r}) using the same arguments, "
            "then export/import the cache")
    return f"{text} ({unknown_hint(mode, recorded)})" if recorded != {mode} else text


@contextlib.contextmanager
def _readable():
    """A cache fault, as the LLMError a replay run reports (replay has nothing to answer from without it)."""
    try:
        yield
    except CacheError as exc:
        raise LLMError(f"replay cannot read its recorded answers: {exc}") from None
