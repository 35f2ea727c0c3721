"""Lexical similarity: the mean pairwise ROUGE-L F-measure between samples (Fomicheva et al. 2020;
a baseline in Kuhn et al. 2023 and Lin et al. 2023). ROUGE-L is computed here from the longest common
subsequence (LCS) of word tokens; no external scorer.

Tokens are lower-cased runs of letters and digits (as the rouge-score package tokenises, accents removed).
ROUGE-L(a, b): P = LCS/|b|, R = LCS/|a|, F = 2PR/(P + R); symmetric in a and b; 0 when either has no token.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from dataclasses import dataclass
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
    """Length of the longest common subsequence of two token lists (dynamic programming, O(|a|·|b|))."""
    if len(a) < len(b):
        a, b = b, a
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b, start=1):
            cur.append(prev[j - 1] + 1 if x == y else max(prev[j], cur[j - 1]))
        prev = cur
    return prev[-1]


def rouge_l(a: str, b: str) -> float:
    """ROUGE-L F-measure of two texts (see the module doc)."""
    ta, tb = tokens(a), tokens(b)
    if not ta or not tb:
        return 0.0
    lcs = lcs_length(ta, tb)
    if lcs == 0:
        return 0.0
    p, r = lcs / len(tb), lcs / len(ta)
    return 2 * p * r / (p + r)


@dataclass
class LexicalSimilarity(Metric):
    """Mean ROUGE-L F over the n(n−1)/2 unordered sample pairs. Confidence = that mean ∈ [0, 1];
    uncertainty = normalised uncertainty = 1 − confidence."""

    name: ClassVar[str] = "lexical_similarity"
    summary: ClassVar[str] = "mean pairwise ROUGE-L between samples (word overlap, no meaning)"
    reference: ClassVar[str] = "Fomicheva et al. 2020; Lin, Trivedi & Sun 2023"

    def _score(self, samples: SampleSet) -> MetricResult:
        n = samples.n
        m = np.eye(n)
        for i, j in itertools.combinations(range(n), 2):
            m[i, j] = m[j, i] = rouge_l(samples.texts[i], samples.texts[j])
        sim = float(m[np.triu_indices(n, 1)].mean())
        return self._result(1.0 - sim, sim, 1.0 - sim, rouge_l=m.tolist())
