"""Small text tools the search lab shares: the token-count proxy for costs, the gate's action tokens and
Jaccard similarity, document-id spotting, and the capitalised-entity rule of the heuristic policy.

**Token proxy** (:func:`count_tokens`): one token per run of word characters and one per other non-space
character, ``re.findall(r"\\w+|[^\\w\\s]", text)``. ``"[doc-091] Havelt: founded."`` is 8 tokens
(``[ doc - 091 ] Havelt : founded .``). It is hand-countable, needs no model and is stable across machines; a
BPE tokeniser gives about 1.1-1.4 of these per English word-or-mark, so compare arms with the same proxy, not
against a provider's bill. Pass ``token_counter=`` to the environment/beliefs to use another count.

**Gate tokens** (:func:`action_tokens`): the set of lower-cased alphanumeric tokens ``[a-z0-9]+`` (the paper's
tok(·)); no stemming and no stop-word removal, so the Jaccard signal is purely lexical.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

__all__ = [
    "CONTENT_STOPWORDS",
    "action_tokens",
    "check_token_counter",
    "content_tokens",
    "count_tokens",
    "entities",
    "find_doc_ids",
    "jaccard",
]

_TOKEN = re.compile(r"\w+|[^\w\s]")
_ALNUM = re.compile(r"[a-z0-9]+")
_DOC_ID = re.compile(r"\b[A-Za-z][A-Za-z0-9_]*-[A-Za-z0-9_-]*\d[A-Za-z0-9_-]*\b")

#: function words ignored when two texts are compared for shared content (grounding, entity spotting)
CONTENT_STOPWORDS = frozenset(
    "a an the of in on at to for from by with and or but is was were are be been being it its it's he she his her "
    "they their them this that these those which who whom whose what when where why how did does do not no yes "
    "as into than then there here also about after before over under between during since until while".split()
)

# words that start a sentence in capitals without naming anything
_SENTENCE_STARTERS = frozenset(
    "The A An It Its He She His Her They Their This That These Those In On At By For From With As After Before "
    "During Since When Where Which Who What How Why Its There Here Her Him Our We You I".split()
)
_ENTITY = re.compile(r"[A-Z][\w'’-]*(?:\s+(?:of\s+|the\s+|de\s+|von\s+)*[A-Z][\w'’-]*)*")


def count_tokens(text: str) -> int:
    """The token-count proxy used for every cost: words (``\\w+`` runs) plus punctuation marks."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    return len(_TOKEN.findall(text))


def check_token_counter(counter: Callable[[str], int] | None) -> Callable[[str], int]:
    """``counter`` or :func:`count_tokens`; a clear error when it is not a function of a string."""
    if counter is None:
        return count_tokens
    if not callable(counter):
        raise TypeError(f"token_counter must be a function str -> int (e.g. count_tokens), got {counter!r}")
    return counter


def action_tokens(text: str) -> frozenset[str]:
    """tok(a): the set of lower-cased alphanumeric tokens of an action's text."""
    return frozenset(_ALNUM.findall((text or "").lower()))


def jaccard(a: Iterable[str] | str, b: Iterable[str] | str) -> float:
    """|A ∩ B| / |A ∪ B| of two token sets (strings are tokenised with :func:`action_tokens`).

    Two empty sets are the same (empty) action: 1.0. One empty and one not: 0.0.
    """
    sa = action_tokens(a) if isinstance(a, str) else frozenset(a)
    sb = action_tokens(b) if isinstance(b, str) else frozenset(b)
    if not sa and not sb:
        return 1.0
    return len(sa & sb) / len(sa | sb)


def content_tokens(text: str) -> set[str]:
    """Lower-cased alphanumeric tokens minus :data:`CONTENT_STOPWORDS` (for grounding checks)."""
    return {t for t in _ALNUM.findall((text or "").lower()) if t not in CONTENT_STOPWORDS}


def find_doc_ids(text: str, known: Iterable[str] | None = None) -> list[str]:
    """Document ids mentioned in ``text``, in order, without repeats.

    Without ``known``: tokens shaped like ``prefix-123`` (``doc-091``, ``musique-ab12``). With ``known`` (the
    corpus ids), a mention is mapped onto a known id when it matches after case-folding, or — for
    ``prefix-<digits>`` ids — when its number matches ignoring zero-padding and the separator (``doc 91``,
    ``DOC-91``, ``doc91`` → ``doc-091``). Mentions that map onto nothing known are returned as written.
    """
    found: list[str] = []
    if known is None:
        for m in _DOC_ID.finditer(text or ""):
            if m.group(0) not in found:
                found.append(m.group(0))
        return found
    known = list(known)
    lower = {k.lower(): k for k in known}
    numeric: dict[tuple[str, int], str] = {}
    for k in known:
        m = re.fullmatch(r"([A-Za-z]+)[-_ ]?0*(\d+)", k)
        if m:
            numeric[(m.group(1).lower(), int(m.group(2)))] = k
    prefixes = sorted({p for p, _ in numeric}, key=len, reverse=True)
    for m in _DOC_ID.finditer(text or ""):
        raw = m.group(0)
        hit = lower.get(raw.lower())
        if hit is None:
            mm = re.fullmatch(r"([A-Za-z]+)[-_]?0*(\d+)", raw)
            if mm:
                hit = numeric.get((mm.group(1).lower(), int(mm.group(2))))
        out = hit or raw
        if out not in found:
            found.append(out)
    if prefixes:  # "doc 91", "doc91": the loose forms the id regex above does not see
        pattern = re.compile(r"\b(" + "|".join(map(re.escape, prefixes)) + r")\s?#?0*(\d+)\b", re.IGNORECASE)
        for m in pattern.finditer(text or ""):
            hit = numeric.get((m.group(1).lower(), int(m.group(2))))
            if hit is not None and hit not in found:
                found.append(hit)
    return found


def entities(text: str) -> list[str]:
    """Capitalised multi-word names in ``text``, in order, without repeats (``"It was founded by Kelys Kalveck
    in Drasir."`` → ``["Kelys Kalveck", "Drasir"]``). Sentence-initial function words (The, It, She, …) are
    dropped from the front of a run; a run of nothing but such words is no name."""
    out: list[str] = []
    for m in _ENTITY.finditer(text or ""):
        words = m.group(0).split()
        while words and (words[0] in _SENTENCE_STARTERS or words[0].lower() in ("of", "the")):
            words = words[1:]
        while words and words[-1].lower() in ("of", "the", "de", "von"):
            words = words[:-1]
        name = " ".join(words)
        if name and name not in out:
            out.append(name)
    return out
