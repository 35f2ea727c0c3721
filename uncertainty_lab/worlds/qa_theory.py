"""Exact theory of a QA world: the distribution of the first-round signals and the expected AUROC, by enumeration.

For one (question, worker, prompt variant) the world draws n i.i.d. forms f_1..f_n with probabilities p_f
(:meth:`~.qa.QAWorld.form_probabilities`); f_1 is the primary. Enumerating the primary and the multiset of the other
n − 1 (multinomial weight (n−1)!/∏m_f! ∏p_f^{m_f}) gives the exact law of

- discrete semantic entropy H/ln n = −Σ_C (|C|/n) ln(|C|/n) / ln n over the **judge's** classes of the forms (the
  judge is asked once per pair of a question's forms; its verdicts must be an equivalence relation on them, so the
  greedy and transitive clusterings agree — refused otherwise);
- semantic density (``embedding_response``, uniform weights, identical texts once) D = (1/|U|) Σ_{u∈U} K(f_1, u),
  K = max(0, 1 − ‖φ(f_1) − φ(u)‖²/h²) over the set U of distinct forms drawn;
- whether the primary is right (its cluster is a correct one).

An :class:`Atoms` holds the distinct (entropy, density, correct) values with their probabilities. The population
AUROC of a confidence s for a wrong first answer, over questions drawn uniformly:
AUROC = Σ_{a right, b wrong} P(a) P(b) (1[s_a > s_b] + ½ 1[s_a = s_b]) / (P(right) P(wrong)).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.special import gammaln

from .qa import QAQuestion, QAWorld

__all__ = ["Atoms", "auroc", "judge_classes", "kernel_matrix", "mixture", "signal_atoms"]

DECIMALS = 12  # atoms equal to 1e-9 are merged


@dataclass(frozen=True)
class Atoms:
    """Distinct outcomes of one worker call: normalised ``entropy`` H/ln n, ``density``, ``correct`` (primary) and
    their ``prob`` (summing to 1, or to a question's weight in a :func:`mixture`)."""

    entropy: np.ndarray
    density: np.ndarray
    correct: np.ndarray
    prob: np.ndarray

    @property
    def accuracy(self) -> float:
        return float(self.prob[self.correct].sum() / self.prob.sum())


@lru_cache(maxsize=16)
def _multisets(n_forms: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Every multiset of ``size`` over ``n_forms`` as a count matrix, and log (size)!/∏ m_f!."""
    rows = []
    for combo in itertools.combinations_with_replacement(range(n_forms), size):
        rows.append(np.bincount(combo, minlength=n_forms))
    m = np.array(rows, dtype=float).reshape(-1, n_forms)
    return m, gammaln(size + 1) - gammaln(m + 1).sum(axis=1)


def judge_classes(judge, question: str, forms: list[str]) -> np.ndarray:
    """The judge's class of each form (numbered by first appearance); refuses verdicts that are not an equivalence
    relation on the forms (then the clustering would depend on the order of the samples)."""
    from ..semantic.clustering import judge_many

    pairs = [(a, b) for a, b in itertools.combinations(forms, 2)]
    verdict = {(j.a, j.b): bool(j.equivalent) for j in judge_many(judge, question, pairs)}
    same = np.eye(len(forms), dtype=bool)
    for (i, a), (j, b) in itertools.combinations(enumerate(forms), 2):
        same[i, j] = same[j, i] = verdict[(a, b)]
    labels = np.full(len(forms), -1)
    for i in range(len(forms)):
        if labels[i] < 0:
            labels[same[i]] = labels.max() + 1
    if not np.array_equal(same, labels[:, None] == labels[None, :]):
        raise ValueError(f"the judge's verdicts on the forms of {question!r} are not transitive: the exact theory "
                         "needs them to be an equivalence relation (choose another judge or threshold)")
    return labels


def kernel_matrix(density, forms: list[str]) -> np.ndarray:
    """K[i, j] = max(0, 1 − ‖φ_i − φ_j‖²/h²) with the density metric's own embedder and bandwidth."""
    from ..semantic.density import epanechnikov

    if getattr(density, "_variant", None) != "embedding_response" or density.weighting == "likelihood" \
            or not density.unique_references or density.target is not None:
        raise ValueError("the exact theory covers semantic_density with variant embedding_response (the default with "
                         "an embedding or exact judge), uniform weights, unique_references and target = sample 0")
    e = density._embed(list(forms))
    return epanechnikov(np.clip(2.0 - 2.0 * (e @ e.T), 0.0, 4.0) / density.bandwidth**2)


def signal_atoms(world: QAWorld, q: QAQuestion, worker: str, variant: str, n: int, judge, density,
                 rephrased: bool = False) -> Atoms:
    """The exact law of (H/ln n, D, primary right) of one call of ``worker`` with prompt ``variant`` (module doc)."""
    table = world.form_probabilities(q, worker, variant, rephrased)
    forms = [t[0] for t in table]
    p = np.array([t[2] for t in table])
    right = np.array([q.correct[t[1]] for t in table])
    classes = judge_classes(judge, q.text, forms)
    kern = kernel_matrix(density, forms)
    m, log_coef = _multisets(len(forms), n - 1)
    prob_rest = np.exp(log_coef + m @ np.log(p))                                    # P(the other n − 1 samples)
    counts = m[None, :, :] + np.eye(len(forms))[:, None, :]                         # [primary, multiset, form]
    sizes = np.rint(counts @ np.eye(classes.max() + 1)[classes]).astype(np.int64)     # judge-class sizes
    xlogx = np.array([0.0] + [(k / n) * math.log(k / n) for k in range(1, n + 1)])
    h = -xlogx[sizes].sum(axis=2)
    present = counts > 0
    present = present.astype(float)
    d = (present @ kern[:, :, None])[:, :, 0] / present.sum(axis=2)
    e = np.minimum(1.0, h / math.log(n)) if n > 1 else np.zeros_like(h)
    c = np.broadcast_to(right[:, None], e.shape)
    return _grouped(e.ravel(), d.ravel(), c.ravel(), (p[:, None] * prob_rest[None, :]).ravel())


def _grouped(e, d, c, p) -> Atoms:
    scale = 10**DECIMALS // 1000  # 1e9 steps: ke, kd <= 1e9, so the combined key fits in int64
    ke, kd = np.round(e * scale).astype(np.int64), np.round(d * scale).astype(np.int64)
    key = (ke * (scale + 1) + kd) * 2 + np.asarray(c, dtype=np.int64)
    uniq, first, inv = np.unique(key, return_index=True, return_inverse=True)
    prob = np.bincount(inv.ravel(), weights=p, minlength=len(uniq))
    return Atoms(ke[first] / scale, kd[first] / scale, np.asarray(c, dtype=bool)[first], prob)


def mixture(parts: list[Atoms]) -> Atoms:
    """The atoms of a question drawn uniformly from ``parts`` (one per question)."""
    w = 1.0 / len(parts)
    return _grouped(*(np.concatenate([getattr(a, f) for a in parts]) for f in ("entropy", "density", "correct")),
                    np.concatenate([a.prob * w for a in parts]))


def auroc(atoms: Atoms, signal: str) -> float:
    """Population AUROC of ``signal``'s confidence (``entropy``: 1 − H/ln n; ``density``: D) for a wrong first answer:
    P(a right answer's confidence > a wrong one's) + ½ P(tie), both drawn independently from ``atoms``."""
    conf = 1.0 - atoms.entropy if signal == "entropy" else atoms.density if signal == "density" else None
    if conf is None:
        raise ValueError(f"signal must be 'entropy' or 'density', got {signal!r}")
    conf = np.round(conf, DECIMALS)
    pr = np.where(atoms.correct, atoms.prob, 0.0)
    pw = np.where(~atoms.correct, atoms.prob, 0.0)
    if pr.sum() == 0 or pw.sum() == 0:
        return math.nan
    values, inv = np.unique(conf, return_inverse=True)
    r = np.bincount(inv.ravel(), weights=pr, minlength=len(values))
    w = np.bincount(inv.ravel(), weights=pw, minlength=len(values))
    below_w = np.concatenate([[0.0], np.cumsum(w)[:-1]])
    return float((r * (below_w + 0.5 * w)).sum() / (r.sum() * w.sum()))
