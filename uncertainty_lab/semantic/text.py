"""Texts as the metrics read them: answer normalisation shared by the ``exact`` judge and correctness scoring
(SQuAD-style), and :func:`valid_text`, which every text entering a sample set, a clustering or the embedder
passes through."""

from __future__ import annotations

import re
import string
import unicodedata
import warnings

__all__ = ["HIDDEN", "InvalidTextWarning", "normalise_answer", "valid_text"]

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans({c: " " for c in string.punctuation + "‘’“”–—…°"})  # "100°C" -> "100 c"
_SURROGATE = re.compile("[\ud800-\udfff]")
#: invisible characters a reader never sees: zero-width spaces and joiners, the soft hyphen, bidirectional marks,
#: embeddings, overrides and isolates, the byte-order mark, and control characters other than whitespace (NUL, …)
HIDDEN = re.compile("[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f"
                    "\ufeff\ufff9-\ufffb\x00-\x08\x0e-\x1f\x7f-\x9f]")


class InvalidTextWarning(UserWarning):
    """A text held code points no UTF-8 text can hold (lone surrogates); they were replaced by U+FFFD."""


def valid_text(text: str, where: str) -> str:
    """``text`` with every code point UTF-8 cannot hold — a surrogate U+D800–U+DFFF, e.g. ``"caf\\ud800"`` from a
    model's byte fallback or a JSON ``"\\ud800"`` escape — replaced by U+FFFD (a surrogate pair is joined into its
    character first), with an :class:`InvalidTextWarning` naming ``where`` (``"texts[2]"``).

    Replaced rather than refused: such a text comes from a model or a file a run cannot redo, the sample's presence
    is itself data (its frequency), and one bad character would otherwise stop a whole experiment; U+FFFD keeps
    every other character, so the metrics still compare the rest, and the warning says which sample it was. Left
    in, the code point breaks every tokenizer (an obscure TypeError) and any UTF-8 journal the text is written to.
    """
    if _SURROGATE.search(text) is None:
        return text
    fixed = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    bad = sorted({f"U+{ord(c):04X}" for c in _SURROGATE.findall(text)})
    shown = text if len(text) <= 60 else text[:59] + "…"
    warnings.warn(f"{where} ({shown!r}) holds surrogate code points ({', '.join(bad)}), which no UTF-8 text can "
                  "hold; a lone one was replaced by U+FFFD, a pair joined into its character", InvalidTextWarning,
                  stacklevel=3)
    return fixed


def normalise_answer(text: str) -> str:
    """Lower-case, strip accents, punctuation and the articles a/an/the, collapse whitespace:
    ``"The  Canberra!"`` -> ``"canberra"``. Compatibility forms are unfolded (NFKD: full-width "Ｐａｒｉｓ" →
    "paris") and invisible characters (:data:`HIDDEN`: zero-width, bidirectional, NUL and other controls) dropped.
    Linear in the length of ``text``."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    if not text.isascii():
        text = unicodedata.normalize("NFKD", HIDDEN.sub("", text))
        text = "".join(ch for ch in text if not unicodedata.combining(ch))
    else:
        text = HIDDEN.sub("", text)
    text = text.lower()
    text = _ARTICLES.sub(" ", text.translate(_PUNCT))
    return " ".join(text.split())
