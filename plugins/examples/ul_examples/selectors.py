"""``hawkes_semantic``: a memory selector that mixes Hawkes excitation with semantic relevance.

HawkesLLM's Algorithm 1 (the built-in ``hawkes`` selector) remembers the latest event of the nodes that
excite the target most recently; it never reads the texts. The built-in ``semantic`` selector reads only the
texts. This one scores the same candidates as Algorithm 1 — the latest event of each node that has spoken —
with both:

    score_j = (1 − λ) · h_j + λ · s_j

- h_j = w^raw_j / Σ_l w^raw_l, node j's share of the excitation reaching the target node at τ_t, where
  w^raw_{j,t} = α̂_{j,n_t} Σ_{τ_m < τ_t, n_m = j} s(τ_t − τ_m) is computed by the core's
  :meth:`HawkesSelector.explain <uncertainty_lab.cascade.HawkesSelector.explain>` (not re-implemented here);
- s_j = max(0, cos(q, x_j)) / Σ_l max(0, cos(q, x_l)), the share of the (clipped) cosine similarity between
  the embedding of the query q (the target node's instruction, or the seed text) and the latest text x_j.

The k candidates with the largest positive score are kept (ties: the more recent node first) and their
weights are score / Σ score. λ = 0 is exactly ``hawkes`` with ``ranking="score"`` and no ε thresholds;
λ = 1 ranks the latest-per-node events by similarity alone. A share is 0 for every node when its total
is 0 (no excitation, or no positive similarity); if both are, the memory is empty.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import numpy as np
from uncertainty_lab.cascade import HawkesSelector
from uncertainty_lab.contracts import CascadeError, History, MemoryItem


@dataclass(frozen=True)
class HawkesSemanticExplanation:
    """The intermediate quantities of one selection, per node (index = node; NaN for a silent node)."""

    raw: np.ndarray  # w^raw_j (from HawkesSelector.explain)
    hawkes_share: np.ndarray  # h_j
    similarity: np.ndarray  # cos(q, x_j) before clipping
    similarity_share: np.ndarray  # s_j
    score: np.ndarray  # (1 − λ) h_j + λ s_j
    latest: tuple[int | None, ...]  # node j's latest event before τ_t
    selected: tuple[int, ...]  # the nodes kept, in rank order
    items: tuple[MemoryItem, ...]


def _shares(values: np.ndarray, active: list[int], n: int) -> np.ndarray:
    out = np.full(n, np.nan)
    total = float(sum(values[j] for j in active))
    for j in active:
        out[j] = values[j] / total if total > 0 else 0.0
    return out


@dataclass
class HawkesSemanticSelector:
    """Algorithm 1's candidates (the latest event of each node), scored by (1 − λ)·(Hawkes excitation share)
    + λ·(share of cosine similarity to the target node's instruction); top k, weights ∝ score."""

    name: ClassVar[str] = "hawkes_semantic"
    summary: ClassVar[str] = "latest event per node, scored (1−λ)·Hawkes excitation share + λ·semantic similarity share"
    reference: ClassVar[str] = "HawkesLLM (Deng, Ye, Xie 2026) Algorithm 1, mixed with embedding retrieval (ul_examples)"

    lam: float = field(
        default=0.5,
        metadata={"min": 0.0, "max": 1.0, "step": 0.05,
                  "help": "λ: 0 = Hawkes excitation only (the hawkes selector, score ranking), 1 = similarity only"},
    )
    query: Literal["instruction", "seed"] = field(
        default="instruction",
        metadata={"choices": ("instruction", "seed"),
                  "help": "what the texts are compared with: the target node's instruction or the seed event's text"},
    )
    embedder: Any = field(default=None, repr=False, compare=False, metadata={"hidden": True})

    def __post_init__(self):
        if not 0.0 <= float(self.lam) <= 1.0:
            raise CascadeError(f"hawkes_semantic selector: lam must be in [0, 1], got {self.lam!r}")
        if self.query not in ("instruction", "seed"):
            raise CascadeError(f"hawkes_semantic selector: query must be 'instruction' or 'seed', got {self.query!r}")

    def _embedder(self):
        if self.embedder is None:
            from uncertainty_lab.embeddings import Embedder

            self.embedder = Embedder()
        return self.embedder

    def _query_text(self, history: History, node_next: int) -> str:
        if self.query == "seed":
            return history[0].text
        if not history.node_specs:
            raise CascadeError("hawkes_semantic with query='instruction' needs node instructions: build the History "
                               "with node_specs, or use query='seed'")
        return history.node_specs[node_next].instruction

    def explain(self, history: History, t_next: float, node_next: int, k: int, model=None,
                rng=None) -> HawkesSemanticExplanation:
        """The selection with its per-node quantities (for a table in a notebook)."""
        # the core's Algorithm 1 computes w^raw and each node's latest event (and checks the arguments)
        core = HawkesSelector(ranking="score", eps_raw=0.0, eps_norm=0.0).explain(history, t_next, node_next, k, model)
        raw, latest, n = np.asarray(core.raw, dtype=float), core.latest, history.n_nodes
        active = [j for j in range(n) if latest[j] is not None]
        h = _shares(raw, active, n)
        sim = np.full(n, np.nan)
        if self.lam > 0 and active:
            vecs = np.asarray(self._embedder().encode([self._query_text(history, node_next)]
                                                      + [history[latest[j]].text for j in active]), dtype=float)
            norms = np.linalg.norm(vecs, axis=1)
            norms[norms == 0] = 1.0
            vecs = vecs / norms[:, None]
            sim[active] = vecs[1:] @ vecs[0]
        s = _shares(np.clip(np.nan_to_num(sim, nan=0.0), 0.0, None), active, n)
        score = (1.0 - self.lam) * h + self.lam * s
        times = history.times
        recency = sorted(active, key=lambda j: (times[latest[j]], latest[j]), reverse=True)
        rank = {j: r for r, j in enumerate(recency)}
        selected = sorted((j for j in active if score[j] > 0), key=lambda j: (-score[j], rank[j]))[:k]
        total = float(sum(score[j] for j in selected))
        items = tuple(MemoryItem(int(latest[j]), int(j), float(score[j] / total)) for j in selected)
        return HawkesSemanticExplanation(raw, h, sim, s, score, tuple(latest), tuple(selected), items)

    def select(self, history: History, t_next: float, node_next: int, k: int, model=None, rng=None) -> list[MemoryItem]:
        return list(self.explain(history, t_next, node_next, k, model).items)
