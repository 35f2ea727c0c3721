"""Lexical similarity: the mean pairwise ROUGE-L F-measure between samples (Fomicheva et al. 2020;
a baseline in Kuhn et al. 2023 and Lin et al. 2023). ROUGE-L is computed here from the longest common
subsequence (LCS) of word tokens; no external scorer.

Tokens are lower-cased runs of the letters a–z and digits, accents removed first ("Café" -> "cafe"). For ASCII
text that is how the rouge-score package tokenises; for other text it is not: rouge-score drops every non-ASCII
letter ("café" -> "caf"), and both drop letters outside the Latin alphabet, so answers in Greek, Cyrillic or CJK
have no tokens here and score 0. **No stemmer**: lm-polygraph's ROUGE-L (rouge-score with ``use_stemmer=True``)
stems words longer than 3 letters ("cities" ~ "city"), so its scores run higher than these (by about 0.20 on real
sample sets); compare the two only knowing that.

ROUGE-L(a, b): P = LCS/|b|, R = LCS/|a|, F = 2PR/(P + R); symmetric in a and b; 0 when either has no token.
The LCS is computed bit-parallel (Hyyrö 2004: one machine-word operation per 64 tokens of the shorter text), and
each text counts at most ``max_tokens`` tokens (``details["truncated"]`` says how many samples were cut), so very
long answers cost seconds, not minutes.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from .metrics import Metric, MetricResult
from .samples import SampleSet

__all__ = ["LexicalSimilarity", "lcs_length", "rouge_l", "tokens"]

_TOKEN = re.compile(r"[a-z0-9]+")


def tokens(text: str) -> list[str]:
    """Lower-case alphanumeric word tokens, accents stripped: ``"Café, 2 cups!"`` -> ``["cafe", "2", "cups"]``."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    text = "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch))
    return _TOKEN.findall(text.lower())


def lcs_length(a: list[str], b: list[str]) -> int:
    """Length of the longest common subsequence of two token lists, bit-parallel (Hyyrö 2004).

    Bit j of V is 0 where b[: j + 1] gains an LCS unit; for each token x of a, with M_x the positions of x in b,
    U = V & M_x and V ← (V + U) | (V − U). LCS = the zero bits of V. O(|a|·|b|/64) word operations, exact."""
    if len(a) < len(b):
        a, b = b, a
    if not b:
        return 0
    positions: dict[str, int] = {}
    for j, tok in enumerate(b):
        positions[tok] = positions.get(tok, 0) | (1 << j)
    full = (1 << len(b)) - 1
    v = full
    for x in a:
        m = positions.get(x)
        if m:
            u = v & m
            v = ((v + u) | (v - u)) & full
    return len(b) - v.bit_count()


def _rouge_l_tokens(ta: list[str], tb: list[str]) -> float:
    if not ta or not tb:
        return 0.0
    lcs = lcs_length(ta, tb)
    if lcs == 0:
        return 0.0
    p, r = lcs / len(tb), lcs / len(ta)
    return 2 * p * r / (p + r)


def rouge_l(a: str, b: str) -> float:
    """ROUGE-L F-measure of two texts (see the module doc)."""
    return _rouge_l_tokens(tokens(a), tokens(b))


@dataclass
class LexicalSimilarity(Metric):
    """Mean ROUGE-L F over the n(n−1)/2 unordered sample pairs. Confidence = that mean ∈ [0, 1];
    uncertainty = normalised uncertainty = 1 − confidence. No stemmer and ASCII-only tokens (see the module doc):
    lm-polygraph's ROUGE-L stems, and scores about 0.20 higher on real sample sets."""

    name: ClassVar[str] = "lexical_similarity"
    summary: ClassVar[str] = ("mean pairwise ROUGE-L between samples (word overlap, no meaning; no stemmer, unlike "
                              "lm-polygraph's)")
    reference: ClassVar[str] = "Fomicheva et al. 2020; Lin, Trivedi & Sun 2023"

    max_tokens: int = field(default=100_000, metadata={
        "min": 1, "max": 10_000_000, "step": 1000,
        "help": "tokens of each text that count; a longer text is cut there (details['truncated'])"})

    def _score(self, samples: SampleSet) -> MetricResult:
        n = samples.n
        toks = [tokens(t) for t in samples.texts]
        truncated = sum(len(t) > self.max_tokens for t in toks)
        toks = [t[: self.max_tokens] for t in toks]
        m = np.eye(n)
        for i, j in itertools.combinations(range(n), 2):
            m[i, j] = m[j, i] = _rouge_l_tokens(toks[i], toks[j])
        sim = float(m[np.triu_indices(n, 1)].mean())
        return self._result(1.0 - sim, sim, 1.0 - sim, rouge_l=m.tolist(), max_tokens=self.max_tokens,
                            truncated=truncated)
