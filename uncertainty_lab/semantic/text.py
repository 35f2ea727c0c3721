"""Answer normalisation shared by the ``exact`` judge and correctness scoring (SQuAD-style)."""

from __future__ import annotations

import re
import string
import unicodedata

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans({c: " " for c in string.punctuation + "‘’“”–—…°"})  # "100°C" -> "100 c"


def normalise_answer(text: str) -> str:
    """Lower-case, strip accents, punctuation and the articles a/an/the, collapse whitespace:
    ``"The  Canberra!"`` -> ``"canberra"``."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    text = unicodedata.normalize("NFKD", text)
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).lower()
    text = _ARTICLES.sub(" ", text.translate(_PUNCT))
    return " ".join(text.split())
