"""What small models wrap around a headline, removed (:func:`clean_headline`); how often a cascade only copies
its memory (:func:`copy_rate`) now lives in :mod:`~uncertainty_lab.cascade.memory_use` and is importable here.

Small models often answer with an echo of the prompt's memory lines (``[weight 0.50] (node, t=… h) …``), a
preamble ("The next item for …:") or several lines; the experiment keeps the first line that reads like a
headline (``clean = true``) and the run file keeps the model's own text as ``raw_text``.
"""

from __future__ import annotations

import re

from ..contracts.memory import CascadeError
from .memory_use import copy_rate  # moved to memory_use (one place for memory and copy rates); the old name stays

__all__ = ["clean_headline", "copy_rate"]

_WEIGHT = re.compile(r"^\[\s*weight\b[^\]\n]*\]?\s*", re.I)
_NODE_TIME = re.compile(r"^\(\s*[\w .&/-]*,\s*t\s*=\s*[-\d.]*\s*(?:h(?:ours?)?)?\s*\)?\s*", re.I)
_LABEL = re.compile(r"^(?:(?:a|the)\s+)?(?:new\s+|next\s+|recent\s+)?(?:headline|item|title|news\s+item)\s*\d*\s*"
                    r"[:\-–—]\s*", re.I)
_BULLET = re.compile(r"^(?:[-*•#>]+\s*|\d+[.)]\s+)")
_PREAMBLE = re.compile(r"^(?:the\s+)?(?:next|new)\s+item\s+for\b|^(?:here\s+is|here's|sure)\b"
                       r"|^(?:(?:a|the)\s+)?(?:recent|new|next)\s+headlines?\b", re.I)
_TRAILING = re.compile(r"\s*\((?:[\w .&/-]*,\s*)?(?:weight\s*\d(?:\.\d+)?|\d{1,3}(?:\.\d+)?\s*%)\)\s*$", re.I)
_QUOTED = re.compile(r'^["“]([^"”]{3,})["”]\s*(?:[(\-–—].*)?$')


def _unquote(line: str) -> str:
    """``line`` without the quotes around it, or without a lone quote that ``max_tokens`` cut off."""
    if len(line) >= 2 and line[0] in "\"'“‘" and line[-1] in "\"'”’":
        return line[1:-1].strip()
    if line[:1] in "\"“" and not any(q in line[1:] for q in "\"”"):
        return line[1:].strip()
    if line[-1:] in "\"”" and not any(q in line[:-1] for q in "\"“"):
        return line[:-1].strip()
    return line


def _strip_line(line: str) -> str:
    prev = None
    line = line.strip()
    while line != prev:
        prev = line
        for pattern in (_WEIGHT, _NODE_TIME, _LABEL, _BULLET):
            line = pattern.sub("", line, count=1).strip()
        line = _TRAILING.sub("", line).strip()  # an echoed '(business finance, 58%)' after the text
        quoted = _QUOTED.match(line)  # '"A headline" (node, weight 0.40)': keep the quoted part
        if quoted:
            line = quoted.group(1)
        line = _unquote(line.strip("*_`").strip())
    return " ".join(line.split())


def _reads_like_text(line: str) -> bool:
    return sum(1 for w in line.split() if any(c.isalpha() for c in w)) >= 2


def clean_headline(text: str) -> str:
    """The first line of ``text`` that reads like a headline, with what small models wrap around one removed:
    an echoed memory annotation (``[weight 0.50] (node, t=216.5 h)``), a label ("Headline:"), a bullet,
    quotes or asterisks, and preamble lines ("The next item for local_tv …:", "Here is …:"). When no line
    qualifies (at least two words with letters), the first line that is not empty once cleaned, else the first
    non-empty line as written; "" for an empty text.

    >>> clean_headline('[weight 0.58] (business_finance, t=210.8 h) Aldmark raises guidance\\n\\nThis')
    'Aldmark raises guidance'
    """
    if not isinstance(text, str):
        raise CascadeError(f"clean_headline needs a string, got {type(text).__name__}")
    lines = [ln for ln in text.splitlines() if ln.strip()]
    for ln in lines:
        if _PREAMBLE.search(ln.strip()) and ln.rstrip().endswith(":"):
            continue
        cleaned = _strip_line(ln)
        if cleaned.endswith(":") and _PREAMBLE.search(cleaned):
            continue
        if _reads_like_text(cleaned):
            return cleaned
    for ln in lines:
        cleaned = _strip_line(ln)
        if cleaned:
            return cleaned
    return " ".join(lines[0].split()) if lines else ""
