"""A scripted language model for the search tests (importable as ``test_search_fakes``), and its own check."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from uncertainty_lab.llm import Completion


@dataclass
class ScriptedLLM:
    """A backend stand-in: ``reply(messages, index, seed) -> text`` (or a fixed string, or a list consumed in
    order); records every request. ``fail_after`` raises after that many calls (an interruption)."""

    reply: Any = "Drasir"
    fail_after: int | None = None
    calls: list[dict[str, Any]] = field(default_factory=list)
    name: str = "scripted"
    supports_logprobs: bool = False

    def model_id(self) -> str:
        return "scripted-1"

    def cache_backend_name(self) -> str:
        return self.name

    @property
    def label(self) -> str:
        return f"{self.name}:{self.model_id()}"

    def _text(self, messages, i: int, seed: int) -> str:
        if callable(self.reply):
            return self.reply(messages, i, seed)
        if isinstance(self.reply, list):
            return self.reply.pop(0)
        return self.reply

    def complete(self, messages, *, n: int = 1, temperature: float = 0.7, max_tokens: int = 128, seed: int = 0,
                 **kw) -> list[Completion]:
        if self.fail_after is not None and len(self.calls) >= self.fail_after:
            raise KeyboardInterrupt("scripted interruption")
        self.calls.append({"messages": messages, "n": n, "temperature": temperature, "seed": seed,
                           "max_tokens": max_tokens})
        return [Completion(self._text(messages, i, seed), "stop", self.name, "scripted-1", seed, i) for i in range(n)]


def by_system(**replies: str | Callable) -> Callable:
    """A reply function choosing by which prompt it is: policy / extraction / answer / decomposition."""

    def reply(messages, i, seed):
        system = messages[0]["content"]
        kind = ("policy" if system.startswith("You are a search agent") else
                "extraction" if "research notebook" in system else
                "decomposition" if system.startswith("Split a question") else "answer")
        r = replies.get(kind, "")
        return r(messages, i, seed) if callable(r) else r

    return reply


def test_scripted_llm_replies_and_records():
    llm = ScriptedLLM(reply=["a", "b"])
    assert [c.text for c in llm.complete("x")] == ["a"]
    assert llm.complete("y", seed=7)[0].text == "b"
    assert len(llm.calls) == 2 and llm.calls[1]["seed"] == 7
