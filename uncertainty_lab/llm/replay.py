"""The replay backend: answers only from a recorded cache (an instructor's export, a test fixture)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from .base import Completion, LLMBackend, LLMError
from .cache import default_cache, request_key


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
        return self.cache if self.cache is not None else default_cache()

    def model_id(self) -> str:
        if self.model:
            return self.model
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

    def _one(self, request, cache, seed):
        hit = self._store().get(request_key(request))
        if hit is None:
            last = request["messages"][-1]["content"]
            raise ReplayMissError(
                f"no recorded answer for {request['backend']}:{request['model']} sample {request['index']} "
                f"(seed={request['seed']}, params={request['params']}) to {last[:80]!r}; record it first with "
                f"get_llm({request['backend']!r}) using the same arguments, then export/import the cache"
            )
        return Completion.from_record(hit, cached=True)
