"""Graph-spectral metrics of Lin, Trivedi & Sun (2023), "Generating with Confidence".

The m samples are the nodes of a weighted graph with similarity matrix W (:func:`similarity_matrix`:
NLI entailment probability, embedding cosine, or 0/1 equivalence; symmetric, unit diagonal). With the
degree matrix D = diag(Σ_k W_jk) and the normalised Laplacian L = I − D^{-1/2} W D^{-1/2}:

- ``eigval_laplacian``: U_EigV = Σ_k max(0, 1 − λ_k(L)), a continuous number of semantic sets, in [1, m]
  (1 when all samples agree, m when all differ). Normalised (U − 1)/(m − 1).
- ``degree``: U_Deg = trace(m·I − D)/m² ∈ [0, (m − 1)/m]; per sample C_Deg(s_j) = D_jj / m.
  Normalised U_Deg · m/(m − 1).
- ``eccentricity``: the eigenvectors of L with eigenvalue below ``eigenvalue_threshold`` (0.9, as in
  lm-polygraph) embed sample j as v_j; U_Ecc = ‖[v_1 − v̄, …, v_m − v̄]‖_F ∈ [0, √(m − 1)], per sample
  C_Ecc(s_j) = −‖v_j − v̄‖. It depends only on the spanned eigenspace, not on the eigenvector basis.
  Normalised U_Ecc / √(m − 1).

Confidence = 1 − normalised uncertainty for all three (so 1 when all samples agree and 0 when all differ).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from .clustering import similarity_matrix
from .metrics import JudgedMetric, MetricResult
from .samples import SampleSet

__all__ = ["Degree", "Eccentricity", "EigValLaplacian", "degree_uncertainty", "eccentricity_uncertainty",
           "eigval_uncertainty", "normalised_laplacian"]


def _check_w(w) -> np.ndarray:
    w = np.asarray(w, dtype=float)
    if w.ndim != 2 or w.shape[0] != w.shape[1] or w.shape[0] == 0:
        raise ValueError(f"W must be a non-empty square matrix, got shape {w.shape}")
    if not np.allclose(w, w.T, atol=1e-9):
        raise ValueError("W must be symmetric; symmetrise it first, e.g. (W + W.T) / 2")
    if (w < -1e-12).any() or (w.sum(axis=1) <= 0).any():
        raise ValueError("W must be non-negative with positive row sums")
    return w


def normalised_laplacian(w) -> np.ndarray:
    """L = I − D^{-1/2} W D^{-1/2} for a symmetric non-negative W."""
    w = _check_w(w)
    d = 1.0 / np.sqrt(w.sum(axis=1))
    return np.eye(len(w)) - d[:, None] * w * d[None, :]


def eigval_uncertainty(w) -> tuple[float, np.ndarray]:
    """U_EigV = Σ max(0, 1 − λ_k) and the eigenvalues of the normalised Laplacian."""
    lam = np.linalg.eigvalsh(normalised_laplacian(w))
    return float(np.maximum(0.0, 1.0 - lam).sum()), lam


def degree_uncertainty(w) -> tuple[float, np.ndarray]:
    """U_Deg = trace(m I − D)/m² and the per-sample confidences C_Deg = D_jj/m."""
    w = _check_w(w)
    m = len(w)
    deg = w.sum(axis=1)
    return float(np.trace(m * np.eye(m) - np.diag(deg)) / m**2), deg / m


def eccentricity_uncertainty(w, threshold: float = 0.9) -> tuple[float, np.ndarray, int]:
    """U_Ecc, the per-sample confidences C_Ecc = −‖v_j − v̄‖, and k (eigenvectors kept)."""
    lam, vec = np.linalg.eigh(normalised_laplacian(w))
    v = vec[:, lam < threshold]  # row j = the spectral embedding of sample j
    centred = v - v.mean(axis=0, keepdims=True)
    dist = np.linalg.norm(centred, axis=1)
    return float(np.linalg.norm(centred)), -dist, int(v.shape[1])


@dataclass
class _GraphMetric(JudgedMetric):
    """Builds W with the judge, then reports :meth:`_spectral`'s U, its normalisation and its details."""

    affinity: str = field(default="entail", metadata={
        "choices": ("entail", "contra"),
        "help": "NLI judges: similarity = p_entail (entail) or 1 - p_contradiction (contra), both directions averaged"})

    def _score(self, samples: SampleSet) -> MetricResult:
        w = similarity_matrix(self._judge, samples.texts, samples.question, affinity=self.affinity)
        u, norm, details = self._spectral(w, samples.n)
        return self._result(u, 1.0 - norm, norm, **details, judge=self.judge_label(), affinity=self.affinity,
                            similarity=w.tolist())

    def _spectral(self, w: np.ndarray, m: int) -> tuple[float, float, dict]:
        """(U, normalised U, the metric's own details) for the similarity matrix W of m samples."""
        raise NotImplementedError


@dataclass
class EigValLaplacian(_GraphMetric):
    """Sum of the normalised Laplacian's eigenvalues below 1, as Σ max(0, 1 − λ) (see the module doc)."""

    name: ClassVar[str] = "eigval_laplacian"
    summary: ClassVar[str] = "continuous number of meaning sets from the similarity graph's Laplacian spectrum"
    reference: ClassVar[str] = "Lin, Trivedi & Sun 2023, Generating with Confidence (U_EigV)"

    def _spectral(self, w: np.ndarray, m: int) -> tuple[float, float, dict]:
        u, lam = eigval_uncertainty(w)
        return u, (u - 1.0) / (m - 1), {"eigenvalues": lam.tolist()}


@dataclass
class Degree(_GraphMetric):
    """Average degree deficit of the similarity graph, U_Deg = trace(mI − D)/m² (see the module doc)."""

    name: ClassVar[str] = "degree"
    summary: ClassVar[str] = "how weakly the samples connect in the similarity graph (degree matrix)"
    reference: ClassVar[str] = "Lin, Trivedi & Sun 2023, Generating with Confidence (U_Deg, C_Deg)"

    def _spectral(self, w: np.ndarray, m: int) -> tuple[float, float, dict]:
        u, c = degree_uncertainty(w)
        return u, u * m / (m - 1), {"sample_confidences": c.tolist()}


@dataclass
class Eccentricity(_GraphMetric):
    """Spread of the samples' spectral embeddings around their centre (see the module doc)."""

    name: ClassVar[str] = "eccentricity"
    summary: ClassVar[str] = "spread of the samples' Laplacian-eigenvector embeddings around their centre"
    reference: ClassVar[str] = "Lin, Trivedi & Sun 2023, Generating with Confidence (U_Ecc, C_Ecc)"

    eigenvalue_threshold: float = field(default=0.9, metadata={
        "min": 0.05, "max": 2.0, "step": 0.05, "help": "keep the Laplacian eigenvectors whose eigenvalue is below this"})

    def _spectral(self, w: np.ndarray, m: int) -> tuple[float, float, dict]:
        u, c, k = eccentricity_uncertainty(w, self.eigenvalue_threshold)
        return u, u / math.sqrt(m - 1), {"sample_confidences": c.tolist(), "n_eigenvectors": k}
