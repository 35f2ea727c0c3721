"""The one final-answer step every exit goes through (a gate, the budget, the model's own finish), and the
answer validation it applies.

:func:`final_answer` asks the model for the answer from the state (question pinned) and :func:`extract_answer`
reads it leniently: the first non-empty line, minus a leading tag (``ANSWER:``, ``Final answer -``, ``A:``),
bullets, markdown and quotes, minus a leading "the answer is", minus a trailing full stop. The answer is then
normalised (:func:`~uncertainty_lab.semantic.text.normalise_answer`). What the reply echoes of its instructions (the
answer prompt's system text and the question) is removed first (:func:`~uncertainty_lab.semantic.echo.strip_instructions`,
the same step the orchestration workers' extraction takes), so an echo is never the answer. It is *invalid* — recorded as a failure
with its reason, never hidden or replaced by a status string — when it is empty after normalisation or an
abstention ("unknown", "I don't know", "not available", …), or when the reply only echoed its instructions (the
failure says so: :data:`~uncertainty_lab.semantic.echo.ECHO_EVIDENCE`). The text is kept either way.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..semantic.echo import ECHO_EVIDENCE, strip_instructions
from ..semantic.text import normalise_answer
from .prompts import ANSWER_SYSTEM, answer_messages
from .text import count_tokens

__all__ = ["ExtractedAnswer", "extract_answer", "final_answer", "is_abstention"]

_TAG = re.compile(r"^\s*(?:[-*•>]+\s*|\d+[.)]\s*)?(?:\*\*|__)?\s*(?:final\s+answer|answer|a)\s*(?:\*\*|__)?\s*[:\-–—=]\s*",
                  re.IGNORECASE)
_LEAD = re.compile(r"^(?:the\s+)?(?:final\s+)?answer\s+(?:is|would\s+be)\s*:?\s*", re.IGNORECASE)
_ABSTAIN = re.compile(
    r"^(?:unknown|none|n a|na|not known|no answer|i don ?t know|i do not know|i m not sure|i am not sure|"
    r"cannot (?:be )?(?:determined|answer(?:ed)?)|can ?t (?:be )?(?:determined|answer(?:ed)?)|"
    r"(?:the )?(?:answer|information) (?:to this question )?is (?:not|un)\s*(?:available|known|clear|given|found)|"
    r"not (?:available|found|given|stated|mentioned)|there is no (?:information|answer))\b"
)


@dataclass(frozen=True)
class ExtractedAnswer:
    """An answer read from a model's reply: its ``text``, ``normalised`` form, whether it is ``valid`` and,
    when not, the ``failure`` reason; ``raw`` is the reply as written."""

    text: str
    normalised: str
    valid: bool
    failure: str | None
    raw: str

    def to_record(self) -> dict[str, Any]:
        return {"text": self.text, "normalised": self.normalised, "valid": self.valid, "failure": self.failure,
                "raw": self.raw}


def extract_answer(raw: str, instructions: tuple[str | None, ...] = ()) -> ExtractedAnswer:
    """Read the answer from a reply leniently, without what it echoes of ``instructions``, then validate it (see
    the module doc)."""
    raw = raw if isinstance(raw, str) else str(raw)
    stripped = strip_instructions(raw, instructions)
    if stripped.only_echo:
        return ExtractedAnswer("", "", False, f"{ECHO_EVIDENCE} (reply {raw[:60]!r})", raw)
    line = next((ln.strip() for ln in stripped.text.splitlines() if ln.strip()), "")
    for _ in range(2):  # "**Answer:** The answer is X"
        line = _TAG.sub("", line, count=1).strip()
        line = _LEAD.sub("", line, count=1).strip()
    line = line.strip("*_`\"'“”‘’ ").strip()
    if line.endswith(".") and not line.endswith(".."):
        line = line[:-1].rstrip()
    norm = normalise_answer(line)
    if not norm:
        return ExtractedAnswer(line, norm, False, f"empty answer after normalisation (reply {raw[:60]!r})", raw)
    if _ABSTAIN.match(norm):
        return ExtractedAnswer(line, norm, False, f"abstention: {line[:60]!r}", raw)
    return ExtractedAnswer(line, norm, True, None, raw)


def is_abstention(answer: Any) -> bool:
    """Whether an answer (an :class:`ExtractedAnswer` or its record) abstains: "unknown", "I don't know", … (an
    empty answer is a failure, not an abstention)."""
    text = answer.get("normalised") if isinstance(answer, dict) else getattr(answer, "normalised", None)
    if text is None:
        raw = answer.get("text", "") if isinstance(answer, dict) else str(answer)
        text = normalise_answer(raw)
    return bool(text) and bool(_ABSTAIN.match(text))


def final_answer(question: str, state: str, llm: Any, *, seed: int, max_tokens: int = 24,
                 temperature: float = 0.0, token_counter: Callable[[str], int] = count_tokens
                 ) -> tuple[ExtractedAnswer, dict[str, int]]:
    """Ask ``llm`` for the answer from ``state``; return the validated answer and the call's token counts
    (``prompt``/``completion`` with the lab's token proxy, ``calls``)."""
    messages = answer_messages(question, state)
    (completion,) = llm.complete(messages, n=1, temperature=temperature, max_tokens=max_tokens, seed=seed)
    tokens = {"prompt": sum(token_counter(m["content"]) for m in messages),
              "completion": token_counter(completion.text), "calls": 1}
    return extract_answer(completion.text, (ANSWER_SYSTEM, question)), tokens
