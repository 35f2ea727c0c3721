"""Memory selectors, registered as ``memory_selectors`` plugins: which ≤ k past events, with which weights,
go into the prompt for the next event (τ_t, n_t).

Protocol: ``select(history, t_next, node_next, k, model=None, rng=None) -> list[MemoryItem]``; an item is
(index into the history, node, weight); weights sum to 1 when the list is non-empty; only events with
τ_m < t_next are eligible; index 0 (the seed event) is as eligible as any other. Items come in the order the
selector ranks them (most relevant first); the prompt lists them in that order.

Built-ins: ``hawkes`` (HawkesLLM Algorithm 1, plus the score-ranking variant), ``recency`` (last k events),
``random`` (k uniformly), ``full_history`` (everything), ``none`` (empty memory), ``semantic`` (embedding
retrieval).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import numpy as np

from ..contracts.memory import CascadeError, History, MemoryItem, MemorySelector
from .sampling import as_generator

__all__ = [
    "FullHistorySelector",
    "HawkesExplanation",
    "HawkesSelector",
    "NoMemorySelector",
    "RandomSelector",
    "RecencySelector",
    "SemanticSelector",
]


def _check_args(history: History, t_next: float, node_next: int, k: int) -> None:
    if not isinstance(history, History):
        raise CascadeError(f"history must be a cascade History, got {type(history).__name__}")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise CascadeError(f"k (the memory budget) must be an integer >= 1, got {k!r}")
    if isinstance(node_next, bool) or not isinstance(node_next, (int, np.integer)) or not 0 <= node_next < history.n_nodes:
        raise CascadeError(f"node_next must be a node index in 0..{history.n_nodes - 1}, got {node_next!r}")
    history._check_query(t_next)


def _uniform(history: History, indices) -> list[MemoryItem]:
    indices = list(indices)
    if not indices:
        return []
    w = 1.0 / len(indices)
    return [MemoryItem(int(i), history[int(i)].node, w) for i in indices]


# --- hawkes (Algorithm 1) -------------------------------------------------------------------------------


@dataclass(frozen=True)
class HawkesExplanation:
    """Everything Algorithm 1 computed for one step (for the notebook's step-by-step memory table).

    ``raw[j]`` = w^raw_{j,t}; ``latest[j]`` = index of node j's latest event before t (None if silent);
    ``order`` = active nodes, most recent first (recency) or by score; ``selected`` = S; ``items`` = M_t.
    """

    t_next: float
    node_next: int
    raw: np.ndarray
    latest: tuple[int | None, ...]
    order: tuple[int, ...]
    selected: tuple[int, ...]
    items: tuple[MemoryItem, ...]
    ranking: str


@dataclass
class HawkesSelector(MemorySelector):
    """HawkesLLM Algorithm 1: per node j, the fitted excitation it sends into the target node at τ_t,
    w^raw_{j,t} = Σ_{τ_m < τ_t, n_m = j} α̂_{j,n_t} e^{-β(τ_t − τ_m)}; order nodes by their latest event,
    most recent first; keep the first min(k, K_active) with w^raw > 0; remember each one's latest event;
    normalise the weights. Empty memory when no node qualifies.

    ``ranking="score"`` is the secondary variant: rank nodes by q_{j,t} = α̂_{j,n_t} h_{j,t} (= w^raw), drop
    nodes with q ≤ ``eps_raw`` and then those with a share q/Σq below ``eps_norm``, keep the top k.
    Defaults: ``eps_raw = 1e-6`` drops only numerically dead influence (an event ~14/β time units old with
    α = 1); ``eps_norm = 0.05`` drops a node bringing under 5% of the excitation reaching the target — a
    quarter of the uniform share with the paper's 5 nodes, too little to earn a slot in a 3-item prompt.
    The thresholds are not used by ``recency``. Note that with k ≥ K_active and no thresholds, the two
    rankings select the same set (the paper's k-insensitivity).

    Ties in recency (two nodes whose latest events share a time) go to the later-appended event first;
    ties in score go to the more recent node. The selection is O(N) per step for exponential-family kernels
    (the history's incremental state); other kernels sum over the history.
    """

    name: ClassVar[str] = "hawkes"
    summary: ClassVar[str] = "HawkesLLM Algorithm 1: latest event of the most recent nodes that excite the target"
    reference: ClassVar[str] = "HawkesLLM (Deng, Ye, Xie 2026) §2.4, Algorithm 1"

    ranking: Literal["recency", "score"] = field(
        default="recency",
        metadata={"choices": ("recency", "score"),
                  "help": "recency = the paper's rule (most recent nodes with positive excitation); "
                          "score = rank by excitation q = α̂ h, with ε thresholds"},
    )
    eps_raw: float = field(default=1e-6, metadata={"min": 0.0, "max": 0.01, "step": 1e-6,
                                                    "help": "score ranking: drop nodes with q ≤ eps_raw"})
    eps_norm: float = field(default=0.05, metadata={"min": 0.0, "max": 1.0, "step": 0.01,
                                                     "help": "score ranking: drop nodes with share q/Σq < eps_norm"})

    def __post_init__(self):
        if self.ranking not in ("recency", "score"):
            raise CascadeError(f"hawkes selector ranking must be 'recency' or 'score', got {self.ranking!r}")

    @staticmethod
    def raw_weights(history: History, t_next: float, node_next: int, model) -> np.ndarray:
        """w^raw_{j,t} = α̂_{j,n_t} Σ_{τ_m < τ_t, n_m = j} s(τ_t − τ_m) for every node j (shape (N,)); O(N) for
        exponential-family kernels, O(history) otherwise. Column n_t of α: ``alpha[source, target]``."""
        if model is None:
            raise CascadeError("the hawkes memory selector needs model= (the fitted HawkesModel)")
        if model.n_nodes != history.n_nodes:
            raise CascadeError(f"the Hawkes model has {model.n_nodes} nodes but the history has {history.n_nodes}")
        comp = getattr(model.kernel, "components", None)
        if callable(comp):
            weights, decays = comp()
            h = np.zeros(history.n_nodes)
            for w, d in zip(np.atleast_1d(weights), np.atleast_1d(decays), strict=True):
                h += float(w) * history.excitation(t_next, float(d))
        else:
            m = history.before(t_next)
            times, nodes = history.times[:m], history.nodes[:m]
            vals = np.asarray(model.kernel.value(t_next - times), dtype=float)
            h = np.bincount(nodes, weights=vals, minlength=history.n_nodes).astype(float)
        return model.alpha[:, node_next] * h

    def explain(self, history: History, t_next: float, node_next: int, k: int, model=None, rng=None) -> HawkesExplanation:
        """Algorithm 1 with its intermediate quantities (raw weights, recency order, S)."""
        _check_args(history, t_next, node_next, k)
        raw = self.raw_weights(history, t_next, node_next, model)
        latest = history.latest_before(t_next)
        active = [j for j in range(history.n_nodes) if latest[j] is not None]
        times = history.times
        # most recent first; a tie in time goes to the later-appended event (larger index)
        by_recency = sorted(active, key=lambda j: (times[latest[j]], latest[j]), reverse=True)
        if self.ranking == "recency":
            order = by_recency
            selected = [j for j in order if raw[j] > 0][: min(k, len(active))]
        else:
            rank = {j: r for r, j in enumerate(by_recency)}
            cand = [j for j in active if raw[j] > 0 and raw[j] > self.eps_raw]
            total = float(sum(raw[j] for j in cand))
            cand = [j for j in cand if raw[j] / total >= self.eps_norm] if total > 0 else []
            order = sorted(active, key=lambda j: (-raw[j], rank[j]))
            selected = sorted(cand, key=lambda j: (-raw[j], rank[j]))[:k]
        items: list[MemoryItem] = []
        if selected:
            z = float(sum(raw[j] for j in selected))
            items = [MemoryItem(int(latest[j]), int(j), float(raw[j] / z)) for j in selected]
        return HawkesExplanation(float(t_next), int(node_next), raw, tuple(latest), tuple(order), tuple(selected),
                                 tuple(items), self.ranking)

    def select(self, history: History, t_next: float, node_next: int, k: int, model=None, rng=None) -> list[MemoryItem]:
        return list(self.explain(history, t_next, node_next, k, model).items)


# --- baselines ------------------------------------------------------------------------------------------


@dataclass
class RecencySelector(MemorySelector):
    """Chronological last-k: the k most recent events before τ_t (any nodes), uniform weights, most recent first."""

    name: ClassVar[str] = "recency"
    summary: ClassVar[str] = "the k most recent events (chronological last-k baseline), uniform weights"
    reference: ClassVar[str] = "HawkesLLM baseline 'chronological last-k'"

    def select(self, history: History, t_next: float, node_next: int, k: int, model=None, rng=None) -> list[MemoryItem]:
        _check_args(history, t_next, node_next, k)
        m = history.before(t_next)
        return _uniform(history, range(m - 1, max(m - k, 0) - 1, -1))


@dataclass
class RandomSelector(MemorySelector):
    """Random-k: k events drawn uniformly without replacement from those before τ_t, uniform weights, listed
    most recent first. Needs ``rng`` (a Generator or an int seed) so runs are reproducible."""

    name: ClassVar[str] = "random"
    summary: ClassVar[str] = "k past events drawn uniformly at random (seeded), uniform weights"
    reference: ClassVar[str] = "HawkesLLM baseline 'random-k'"

    def select(self, history: History, t_next: float, node_next: int, k: int, model=None, rng=None) -> list[MemoryItem]:
        _check_args(history, t_next, node_next, k)
        if rng is None:
            raise CascadeError("the random memory selector needs rng= (a numpy Generator or an int seed)")
        gen = as_generator(rng)
        m = history.before(t_next)
        if m == 0:
            return []
        chosen = gen.choice(m, size=min(k, m), replace=False)
        return _uniform(history, sorted(chosen.tolist(), reverse=True))


@dataclass
class FullHistorySelector(MemorySelector):
    """Every event before τ_t, uniform weights, most recent first (k is ignored: the long-context baseline)."""

    name: ClassVar[str] = "full_history"
    summary: ClassVar[str] = "all past events, uniform weights (ignores k: the long-context baseline)"
    reference: ClassVar[str] = ""

    def select(self, history: History, t_next: float, node_next: int, k: int, model=None, rng=None) -> list[MemoryItem]:
        _check_args(history, t_next, node_next, k)
        return _uniform(history, range(history.before(t_next) - 1, -1, -1))


@dataclass
class NoMemorySelector(MemorySelector):
    """No memory: every prompt holds only the event and the node instruction."""

    name: ClassVar[str] = "none"
    summary: ClassVar[str] = "empty memory: the prompt holds only the event and the node instruction"
    reference: ClassVar[str] = ""

    def select(self, history: History, t_next: float, node_next: int, k: int, model=None, rng=None) -> list[MemoryItem]:
        _check_args(history, t_next, node_next, k)
        return []


@dataclass
class SemanticSelector(MemorySelector):
    """Embedding retrieval: the k past events most similar (cosine) to a query — the target node's
    instruction (``query="instruction"``, needs a history built with node specs) or the seed text
    (``query="seed"``). Weights ∝ similarity clipped at 0, normalised (uniform if every similarity is ≤ 0).
    Ties go to the more recent event. O(history) per step (texts are embedded once, then cached)."""

    name: ClassVar[str] = "semantic"
    summary: ClassVar[str] = "the k past events most similar by embedding to the node's instruction or the seed"
    reference: ClassVar[str] = ""

    query: Literal["instruction", "seed"] = field(
        default="instruction",
        metadata={"choices": ("instruction", "seed"),
                  "help": "what to retrieve against: the target node's instruction or the seed event's text"},
    )
    embedder: Any = field(default=None, repr=False, compare=False, metadata={"hidden": True})

    def __post_init__(self):
        if self.query not in ("instruction", "seed"):
            raise CascadeError(f"semantic selector query must be 'instruction' or 'seed', got {self.query!r}")

    def _embedder(self):
        if self.embedder is None:
            from ..embeddings import Embedder

            self.embedder = Embedder()
        return self.embedder

    def select(self, history: History, t_next: float, node_next: int, k: int, model=None, rng=None) -> list[MemoryItem]:
        _check_args(history, t_next, node_next, k)
        m = history.before(t_next)
        if m == 0:
            return []
        if self.query == "instruction":
            if not history.node_specs:
                raise CascadeError(
                    "semantic selector with query='instruction' needs node instructions: build the History "
                    "with node_specs, or use query='seed'"
                )
            q_text = history.node_specs[node_next].instruction
        else:
            q_text = history[0].text
        emb = self._embedder()
        vecs = np.asarray(emb.encode([q_text] + [e.text for e in history.events[:m]]), dtype=float)
        norms = np.linalg.norm(vecs, axis=1)
        norms[norms == 0] = 1.0
        vecs = vecs / norms[:, None]
        sims = vecs[1:] @ vecs[0]
        order = np.lexsort((-np.arange(m), -sims))[: min(k, m)]  # by similarity, ties: most recent first
        w = np.clip(sims[order], 0.0, None)
        w = w / w.sum() if w.sum() > 0 else np.full(order.size, 1.0 / order.size)
        return [MemoryItem(int(i), history[int(i)].node, float(wi)) for i, wi in zip(order, w, strict=True)]
