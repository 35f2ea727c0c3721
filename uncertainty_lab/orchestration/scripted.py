"""A scripted backend: :class:`ScriptedLLM` replies from a table keyed by worker role and prompt kind instead of
a model — for labelled illustrations of the coordinator loop (notebook 04) and tests, never for results.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..llm import Completion, LLMBackend
from .coordinator import ACCEPTANCE_CRITERIA
from .workers import WORKER_ROLES

__all__ = ["ScriptedLLM"]




def _role_of(system: str) -> str:
    return next((name for name, text in WORKER_ROLES.items() if text == system), "?")


def _kind_of(user: str) -> str:
    if "New angle:" in user:
        return "reprompt"
    if ACCEPTANCE_CRITERIA in user:
        return "delegate"
    return "ask"


@dataclass
class ScriptedLLM(LLMBackend):
    """A backend that answers from ``script`` instead of a model — for illustrations and tests, never for
    results. Keys are ``"<worker>:<kind>"``, ``"*:<kind>"`` or ``"*"`` (tried in that order), where the worker
    is a role of :data:`~.workers.WORKER_ROLES` (recognised by its system prompt) and the kind is ``ask``,
    ``reprompt`` (a re-prompt: it carries "New angle:") or ``delegate``; values are lists of texts, sample i
    of a request getting ``texts[i % len(texts)]``. Nothing is cached; the same request always gets the
    same answers."""

    name: ClassVar[str] = "scripted"
    summary: ClassVar[str] = "replies from a script, for labelled illustrations (no model)"
    script: Mapping[str, Sequence[str]] = field(default_factory=dict)

    def __post_init__(self):
        if not isinstance(self.script, Mapping) or not self.script:
            raise ValueError("script must be a non-empty dict like {'direct:ask': ['Canberra', 'Sydney']}")
        for key, texts in self.script.items():
            if isinstance(texts, str) or not texts or not all(isinstance(t, str) for t in texts):
                raise ValueError(f"script[{key!r}] must be a non-empty list of strings, got {texts!r}")

    def model_id(self) -> str:
        return "script"

    def reply(self, system: str, user: str, index: int) -> str:
        role, kind = _role_of(system), _kind_of(user)
        for key in (f"{role}:{kind}", f"*:{kind}", "*"):
            if key in self.script:
                texts = self.script[key]
                return texts[index % len(texts)]
        raise KeyError(f"the script has no reply for worker {role!r}, kind {kind!r}; add '{role}:{kind}', "
                       f"'*:{kind}' or '*' (keys: {sorted(self.script)})")

    def _one(self, request: dict[str, Any], cache: Any, seed: int) -> Completion:
        msgs = request["messages"]
        system = next((m["content"] for m in msgs if m["role"] == "system"), "")
        text = self.reply(system, msgs[-1]["content"], request["index"])
        return Completion(text=text, finish_reason="stop", backend=self.name, model="script", seed=request["seed"],
                          index=request["index"], logprobs=None)
