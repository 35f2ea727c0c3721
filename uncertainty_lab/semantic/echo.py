"""Echoed instructions in a model's reply: a small model often repeats its system prompt or the prompt ("A name, a
number, yes or no, or a few words", "The answer to the question … is") instead of, or before, answering.

:func:`strip_instructions` removes them before an answer is extracted, so an echo never reaches a metric, a grade
or the final answer. The instructions are cut into pieces at sentence and clause marks (``. ! ? : ;`` and line
ends); every piece of three words or more that the reply repeats (same words in order, case and punctuation
aside) is removed, and so is a placeholder of the instructions the reply copies ("<short answer>"), then any
echoed yes/no instruction (:func:`~.grading_text.strip_echo`). What remains is the
answer; a reply that was nothing but echoes — or whose remainder is only answer filler ("the answer to the question
is") — becomes empty, with ``echoed=True``: an empty answer, graded wrong with the evidence :data:`ECHO_EVIDENCE`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from .grading_text import strip_echo

__all__ = ["ECHO_EVIDENCE", "Stripped", "instruction_pieces", "strip_instructions"]

#: the grade evidence of an answer that was only an echo of its instructions
ECHO_EVIDENCE = "echoed the instruction: the reply repeats its instructions and gives no answer"
MIN_PIECE_WORDS = 3
_SPLIT = re.compile(r"[.!?:;\n]+(?:\s|$)|\n")
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)
_FILLER = frozenset("the a an answer answers to this that your my final question questions is would be here it reply "
                    "short only".split())
_PLACEHOLDER = re.compile(r"<[^<>\n]{1,40}>")
_EMPTY_QUOTES = re.compile(r"[\"“”'‘’«»`*][^\w\"“”'‘’«»`*]*[\"“”'‘’«»`*]")  # quotes left around a removed piece


@dataclass(frozen=True)
class Stripped:
    """A reply without its echoes: the ``text`` left, whether anything was ``echoed``, and whether the reply was
    ``only_echo`` (nothing but echoes and filler: ``text`` is "")."""

    text: str
    echoed: bool
    only_echo: bool


def instruction_pieces(instructions: Iterable[str | None]) -> list[list[str]]:
    """The word lists (lower case) of the instructions' pieces of :data:`MIN_PIECE_WORDS` words or more, longest
    first (so a sentence is removed whole before any shorter piece of it)."""
    pieces = []
    for text in instructions:
        for part in _SPLIT.split(text or ""):
            words = [w.lower() for w in _WORD.findall(part)]
            if len(words) >= MIN_PIECE_WORDS:
                pieces.append(words)
    return sorted(pieces, key=len, reverse=True)


def _pattern(words: list[str]) -> re.Pattern[str]:
    return re.compile(r"(?<![^\W_])" + r"[\W_]+".join(re.escape(w) for w in words) + r"(?![^\W_])",
                      re.IGNORECASE | re.UNICODE)


def _is_filler(text: str) -> bool:
    return all(w.lower() in _FILLER for w in _WORD.findall(text))


def strip_instructions(text: str, instructions: Iterable[str | None] = ()) -> Stripped:
    """``text`` without the pieces of ``instructions`` it repeats and without an echoed yes/no instruction (see the
    module doc). A reply with no words to start with is not an echo (``echoed=False``, ``only_echo=False``)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    if not _WORD.search(text):
        return Stripped(text, False, False)
    instructions = [t or "" for t in instructions]
    out = text
    for words in instruction_pieces(instructions):
        out = _pattern(words).sub(" ", out)
    for slot in {m.group() for t in instructions for m in _PLACEHOLDER.finditer(t)}:  # "Answer: <short answer>"
        out = re.sub(re.escape(slot), " ", out, flags=re.IGNORECASE)
    out = strip_echo(out)
    out = _EMPTY_QUOTES.sub(" ", out)
    echoed = _words(out) != _words(text)
    if echoed and (not _WORD.search(out) or _is_filler(out)):
        return Stripped("", True, True)
    if not echoed:
        return Stripped(text, False, False)
    out = re.sub(r"[ \t]{2,}", " ", out)
    out = re.sub(r"^[\s\W_]*?(?=[^\W_]|[\"“'‘(])", "", out)  # punctuation left at the start by a removed piece
    return Stripped(out.strip(), True, False)


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]
