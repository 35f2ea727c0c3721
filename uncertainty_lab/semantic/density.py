"""Semantic density: how much probability mass lies semantically close to an answer (a kernel density
estimate in a meaning space). Four named variants, because implementations disagree (HASSUM §2.3–2.4, §6):

``nli`` — Qiu & Miikkulainen (NeurIPS 2024), response-specific. For a target y* and references y_i:

    E‖v* − v_i‖² = ½ [ (p_c + ½ p_n)(y* ⇒ y_i) + (p_c + ½ p_n)(y_i ⇒ y*) ]      (NLI distance, both directions)
    K(v*, v_i)   = (1 − E‖v* − v_i‖²) · 1[E‖v* − v_i‖ ≤ 1]                      (Epanechnikov kernel with the
                                                                                dimension-dependent constant dropped,
                                                                                so K ∈ [0, 1])
    SD(y*|x)     = Σ_i w_i K(v*, v_i) / Σ_i w_i,   w_i = p(y_i|x)^{1/L_i}        (length-normalised likelihood)

    The target's own term is K(y*, y*) = 1 (a text entails itself), and that pair is not sent to the judge.
    Qiu & Miikkulainen's code runs NLI on the self pair too, so their K(y*, y*) is the NLI model's (a little
    below 1): with few references their density is a little lower than this one.

``embedding_response`` — the same estimator with all-MiniLM-L6-v2 embeddings u = φ(y):
    K = max(0, 1 − ‖u* − u_i‖² / h²); for unit vectors and h = 1 this is max(0, 2 cos − 1).

``embedding_set`` — HASSUM's Eq. 2, set-level: D = (1/N²) Σ_i Σ_j K(φ(y_i), φ(y_j)) over all N² ordered pairs
    with the same kernel. The diagonal adds N ones, so D ≥ 1/N (``include_diagonal=False`` averages the N(N−1)
    off-diagonal pairs instead). Unweighted, as written.

``mean_cosine`` — the reference service's quantity: the mean off-diagonal cosine similarity, clamped to [0, 1].
    Not a kernel density (no kernel, no likelihood, not response-specific); offered to show the difference.

``auto`` runs ``nli`` when the judge gives NLI probabilities and ``embedding_response`` otherwise.
The embedding variants read what the embedder reads: all-MiniLM-L6-v2 embeds only the first 256 word pieces of a
text, so texts that differ only after that count as the same; ``details["truncated"]`` counts the texts cut so.
The target (response-specific variants) is the greedy answer when the sample set has one, else sample 0,
unless ``target`` names a sample index; a greedy target joins the references, as y* is among Qiu &
Miikkulainen's references. With ``unique_references`` (default) identical texts count once: sampling
frequency and likelihood weights would otherwise both count the same probability mass.
Weights: ``likelihood`` needs token logprobs (missing value without them); ``uniform`` sets w_i = 1;
``auto`` uses likelihood when every reference has logprobs, else uniform, and says which.
Uncertainty = 1 − density; confidence = density ∈ [0, 1]. ``details["variant"]`` says which variant ran.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .metrics import JudgedMetric, MetricResult
from .samples import SampleSet
from .text import normalise_answer

__all__ = ["VARIANTS", "SemanticDensity", "epanechnikov", "nli_distance"]

VARIANTS = ("auto", "nli", "embedding_set", "embedding_response", "mean_cosine")


def epanechnikov(sq_distance: np.ndarray | float) -> np.ndarray:
    """Dimension-invariant Epanechnikov kernel of a squared distance d²: (1 − d²)·1[d ≤ 1] = max(0, 1 − d²)."""
    d2 = np.asarray(sq_distance, dtype=float)
    return np.where(d2 <= 1.0, 1.0 - d2, 0.0)


def nli_distance(p_forward, p_backward) -> float:
    """E‖v* − v_i‖² from (p_c, p_n, p_e) of y* ⇒ y_i and of y_i ⇒ y*: the mean over both directions of
    p_c + ½ p_n (contradiction = 1, neutral = ½, entailment = 0)."""
    f = float(p_forward[0]) + 0.5 * float(p_forward[1])
    b = float(p_backward[0]) + 0.5 * float(p_backward[1])
    return 0.5 * (f + b)


@dataclass
class SemanticDensity(JudgedMetric):
    """Semantic density (Qiu & Miikkulainen 2024) and HASSUM's embedding variant (see the module doc). The ``nli``
    variant takes K(y*, y*) = 1 without judging the self pair, where Qiu & Miikkulainen's code judges it with NLI;
    the embedding variants see only the first 256 word pieces of a text (``details["truncated"]``)."""

    name: ClassVar[str] = "semantic_density"
    summary: ClassVar[str] = "kernel density of answers near the target in meaning space (NLI or embedding variants)"
    reference: ClassVar[str] = "Qiu & Miikkulainen, NeurIPS 2024; HASSUM Eq. 2"

    variant: str = field(default="auto", metadata={
        "choices": VARIANTS, "help": "nli (Qiu & Miikkulainen), embedding_response, embedding_set (HASSUM Eq. 2), "
                                     "mean_cosine; auto = nli when the judge gives probabilities"})
    target: int | None = field(default=None, metadata={
        "min": 0, "help": "sample index of the target answer; empty = the greedy answer if present, else sample 0"})
    weighting: str = field(default="auto", metadata={
        "choices": ("auto", "likelihood", "uniform"),
        "help": "reference weights: length-normalised likelihood, uniform, or likelihood when logprobs exist"})
    unique_references: bool = field(default=True, metadata={"help": "count identical reference texts once"})
    bandwidth: float = field(default=1.0, metadata={
        "min": 0.05, "max": 2.0, "step": 0.05, "help": "embedding kernel bandwidth h: K = max(0, 1 - |u - v|^2 / h^2)"})
    include_diagonal: bool = field(default=True, metadata={
        "help": "embedding_set: average all N^2 ordered pairs incl. i = j (HASSUM Eq. 2) or only i != j"})
    embedding_model: str = field(default="", metadata={"help": "a local sentence-transformers folder; empty = all-MiniLM-L6-v2"})
    embed_normalised: bool = field(default=False, metadata={
        "help": "embed normalise_answer(text): removes case/punctuation/article differences before embedding"})
    embedder: Any = field(default=None, repr=False, metadata={"hidden": True})

    def __post_init__(self):
        super().__post_init__()
        gives = bool(getattr(self._judge, "gives_probabilities", False))
        if self.variant == "nli" and not gives:
            raise ValueError(
                f"semantic_density variant 'nli' needs a judge with NLI probabilities (llm_entailment, "
                f"nli_cross_encoder), but judge {self.judge_label()!r} gives none; use variant='auto' or an embedding variant"
            )
        self._variant = self.variant if self.variant != "auto" else ("nli" if gives else "embedding_response")

    # -- embeddings ----------------------------------------------------------------------------------
    def _truncated(self, texts: list[str]) -> int | None:
        """How many of ``texts`` the embedder reads only in part (None when it cannot say)."""
        prepared = [normalise_answer(t) for t in texts] if self.embed_normalised else list(texts)
        count = getattr(self.embedder, "truncated", None)
        return len(count(prepared)) if callable(count) else None

    def _embed(self, texts: list[str]) -> np.ndarray:
        if self.embedder is None:
            judge_embedder = getattr(self._judge, "embedder", None)
            if judge_embedder is not None and not self.embedding_model:
                self.embedder = judge_embedder
            else:
                from ..embeddings import Embedder

                self.embedder = Embedder(self.embedding_model or None)
        prepared = [normalise_answer(t) for t in texts] if self.embed_normalised else list(texts)
        vecs = np.asarray(self.embedder.encode(prepared), dtype=float)
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        return vecs / np.where(norms > 0, norms, 1.0)

    # -- scoring ------------------------------------------------------------------------------------
    def _score(self, samples: SampleSet) -> MetricResult:
        if self._variant == "embedding_set":
            return self._embedding_set(samples)
        if self._variant == "mean_cosine":
            return self._mean_cosine(samples)
        return self._response_specific(samples)

    def _done(self, density: float, **details: Any) -> MetricResult:
        return self._result(1.0 - density, density, 1.0 - density, variant=self._variant,
                            judge=self.judge_label() if self._variant == "nli" else None, **details)

    def _embedding_set(self, samples: SampleSet) -> MetricResult:
        e = self._embed(samples.texts)
        sq = np.clip(2.0 - 2.0 * (e @ e.T), 0.0, 4.0) / self.bandwidth**2
        k = epanechnikov(sq)
        n = samples.n
        if self.include_diagonal:
            d = float(k.sum() / n**2)
        else:
            d = float((k.sum() - np.trace(k)) / (n * (n - 1)))
        return self._done(d, kernel=k.tolist(), include_diagonal=self.include_diagonal, bandwidth=self.bandwidth,
                          weighting="none (Eq. 2 is unweighted)", lower_bound=1.0 / n if self.include_diagonal else 0.0,
                          truncated=self._truncated(samples.texts))

    def _mean_cosine(self, samples: SampleSet) -> MetricResult:
        e = self._embed(samples.texts)
        cos = e @ e.T
        n = samples.n
        mean = float((cos.sum() - np.trace(cos)) / (n * (n - 1)))
        return self._done(min(1.0, max(0.0, mean)), cosine=cos.tolist(), raw_mean_cosine=mean,
                          weighting="none", note="mean pairwise cosine: not a kernel density estimate",
                          truncated=self._truncated(samples.texts))

    def _references(self, samples: SampleSet):
        lps = samples.length_normalised_logprobs
        refs = [(t, None if lps is None or math.isnan(lps[i]) else float(lps[i])) for i, t in enumerate(samples.texts)]
        if self.target is not None:
            if self.target >= samples.n:
                raise ValueError(f"target={self.target} but the sample set has {samples.n} samples; "
                                 "pass a sample index or None (greedy answer, else sample 0)")
            target, source = samples.texts[self.target], f"sample {self.target}"
        elif samples.greedy is not None:
            g_lp = samples.greedy_length_normalised_logprob
            target, source = samples.greedy, "greedy"
            refs.append((samples.greedy, None if g_lp is None or math.isnan(g_lp) else g_lp))
        else:
            target, source = samples.texts[0], "sample 0"
        if self.unique_references:
            seen: dict[str, Any] = {}
            for t, lp in refs:
                seen.setdefault(t, lp)
            refs = list(seen.items())
        return target, source, refs

    def _response_specific(self, samples: SampleSet) -> MetricResult:
        target, source, refs = self._references(samples)
        texts = [t for t, _ in refs]
        have_all = all(lp is not None for _, lp in refs)
        weighting = self.weighting if self.weighting != "auto" else ("likelihood" if have_all else "uniform")
        if weighting == "likelihood" and not have_all:
            return MetricResult.missing_value(
                self.name, "likelihood weighting needs token logprobs for every reference (sample with logprobs, "
                           "or set weighting='uniform')", n_samples=samples.n, variant=self._variant)
        if weighting == "likelihood":
            lw = np.array([lp for _, lp in refs], dtype=float)
            w = np.exp(lw - lw.max())  # the common factor cancels in the ratio
        else:
            w = np.ones(len(refs))
        if self._variant == "nli":
            sq, extra = self._nli_distances(samples.question, target, texts)
        else:
            e = self._embed([target, *texts])
            sq = np.clip(2.0 - 2.0 * (e[1:] @ e[0]), 0.0, 4.0) / self.bandwidth**2
            extra = {"bandwidth": self.bandwidth, "truncated": self._truncated(texts)}
        k = epanechnikov(sq)
        density = float((w * k).sum() / w.sum())
        return self._done(density, target=target, target_source=source, references=texts,
                          weights=(w / w.sum()).tolist(), weighting=weighting, sq_distances=sq.tolist(),
                          kernel=k.tolist(), **extra)

    def _nli_distances(self, question: str, target: str, texts: list[str]) -> tuple[np.ndarray, dict[str, Any]]:
        """E‖v* − v_i‖² per reference from NLI both ways; the target itself is at distance 0 and not judged."""
        others = list(dict.fromkeys(t for t in texts if t != target))
        directed = [d for t in others for d in ((target, t), (t, target))]
        probs = np.asarray(self._judge.probabilities_many(question, directed), dtype=float).reshape(-1, 2, 3) \
            if directed else np.zeros((0, 2, 3))
        by_text = dict(zip(others, probs, strict=True))
        self_pair = np.array([[0.0, 0.0, 1.0], [0.0, 0.0, 1.0]])  # y* entails itself both ways
        pairs = [by_text.get(t, self_pair) for t in texts]
        sq = np.array([0.0 if t == target else nli_distance(p[0], p[1]) for t, p in zip(texts, pairs, strict=True)])
        return sq, {"nli_probabilities": [p.tolist() for p in pairs], "self_pair": "K(y*, y*) = 1, not judged"}
