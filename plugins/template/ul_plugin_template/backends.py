"""An ``llm_backends`` plugin: ``echo``, a fake language model for teaching and tests.

Protocol: ``complete(messages, *, n, temperature, top_p, max_tokens, seed, stop, logprobs, use_cache)``
returns a list of :class:`~uncertainty_lab.llm.Completion`. Subclassing
:class:`~uncertainty_lab.llm.LLMBackend` means implementing only ``model_id()`` and ``_generate(...)``
(one sample, one seed); validation, per-sample seeds and the completion cache come from the base class.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from uncertainty_lab.contracts import LLMBackend


@dataclass
class EchoLLM(LLMBackend):
    """NOT a language model: it answers with a fixed transform of the last user message, so it knows
    nothing and understands nothing. Use it to see how a backend plugs in, or to test code offline.

    ``transform``: ``repeat`` (the message as is), ``upper`` or ``reverse_words``. The answer is cut to
    ``max_tokens`` words (finish reason "length") and at the first ``stop`` string. It ignores temperature;
    with ``variants > 1`` the sample's seed picks one of that many variants ("… (variant 2)"), so sampled
    answers can disagree the way a real model's do — deterministically, the same seed giving the same text.
    """

    name: ClassVar[str] = "echo"
    summary: ClassVar[str] = "a fake model that echoes a transform of the prompt (teaching toy, offline, instant)"
    reference: ClassVar[str] = "uncertainty-lab plugin template"

    transform: Literal["repeat", "upper", "reverse_words"] = field(
        default="repeat",
        metadata={"choices": ("repeat", "upper", "reverse_words"), "help": "what to do to the last user message"},
    )
    variants: int = field(
        default=1, metadata={"min": 1, "max": 10, "step": 1, "help": "distinct answers the seed chooses among (1 = always the same)"}
    )

    def model_id(self) -> str:
        return f"echo-{self.transform}-v{self.variants}"

    def _generate(self, messages: list[dict[str, str]], *, temperature: float, top_p: float, max_tokens: int,
                  seed: int, stop: list[str] | None, logprobs: bool) -> dict[str, Any]:
        prompt = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
        if self.transform == "upper":
            text = prompt.upper()
        elif self.transform == "reverse_words":
            text = " ".join(reversed(prompt.split()))
        else:
            text = prompt
        variant = seed % self.variants
        if variant:
            text = f"{text} (variant {variant})"
        finish = "stop"
        words = text.split()
        if len(words) > max_tokens:
            text, finish = " ".join(words[:max_tokens]), "length"
        for s in stop or ():
            if s and s in text:
                text, finish = text[: text.index(s)], "stop"
        return {"text": text, "finish_reason": finish, "logprobs": None}
