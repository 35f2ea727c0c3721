"""The CGDP environment: a corpus is the hidden state c, the tools are the observation function F.

- ``search(query, k)`` → the top-k passages (BM25 through the ``bm25s`` library by default; ``retriever=
  "embedding"`` ranks by cosine similarity of all-MiniLM-L6-v2 embeddings, ``"hybrid"`` fuses the two rankings
  by reciprocal-rank fusion, RRF(d) = Σ_r 1 / (rrf_k + rank_r(d))).
- ``read(doc_id)`` → one whole document.
- ``answer(text)`` → the terminal action; it observes nothing.

A *passage* is one corpus document; its id is the document id, stable across steps, so the exhaustion gate's
unique-passage rate compares like with like.

**Cost** (paper Eq. 1): Cost(a_t) is the number of tokens of the observation text o_t that enters the model's
context (the rendered passages, or the error message), counted with :func:`~uncertainty_lab.search.text.count_tokens`
(or your ``token_counter``). The terminal ``answer`` costs 0. The per-episode objective is
``success − λ · Σ_t Cost(a_t)`` (:func:`objective`). Model-call tokens (prompts and completions) are recorded
separately by the agent.

BM25 tokenisation: lower-cased ``\\w+`` runs, minus bm25s's English stop-word list, over "title + text"; no
stemmer (none ships offline with bm25s). Pass ``stemmer=`` a function ``list[str] -> list[str]`` to add one.
Scores are Lucene BM25 (k1 = 1.5, b = 0.75); passages with score 0 (no query term) are not returned, so a
query with no known term returns nothing. Ties keep corpus order.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..datasets.search import Document
from .text import check_token_counter, find_doc_ids

__all__ = [
    "ACTION_KINDS",
    "RETRIEVERS",
    "Action",
    "Observation",
    "SearchEnvironment",
    "SearchEnvironmentError",
    "objective",
]

ACTION_KINDS = ("search", "read", "answer")
RETRIEVERS = ("bm25", "embedding", "hybrid")
NO_RESULTS = "(no results for this query)"
_BM25_TOKEN = re.compile(r"\w+")


class SearchEnvironmentError(ValueError):
    """A bad argument to the search environment; the message names it and the fix."""


@dataclass(frozen=True)
class Action:
    """One action a_t: ``kind`` in ("search", "read", "answer") and its ``argument`` (query, doc id, answer)."""

    kind: str
    argument: str

    def __post_init__(self):
        if self.kind not in ACTION_KINDS:
            raise SearchEnvironmentError(f"Action.kind must be one of {ACTION_KINDS}, got {self.kind!r}")
        if not isinstance(self.argument, str):
            raise SearchEnvironmentError(f"Action.argument must be a string, got {type(self.argument).__name__}")

    def render(self) -> str:
        """The action as the model writes it: ``SEARCH: <query>`` / ``READ: <id>`` / ``ANSWER: <text>``."""
        return f"{self.kind.upper()}: {self.argument}"

    def to_record(self) -> dict[str, str]:
        return {"kind": self.kind, "argument": self.argument}

    @classmethod
    def from_record(cls, rec: dict[str, Any]) -> Action:
        return cls(rec["kind"], rec["argument"])


@dataclass(frozen=True)
class Observation:
    """o_t = F(a_t, c): the passage ids shown (C_t, in rank order), their retrieval scores, the text that enters
    the context, its token ``cost``, and an ``error`` when the action could not be carried out."""

    action: Action
    passage_ids: tuple[str, ...] = ()
    scores: tuple[float, ...] = ()
    text: str = ""
    cost: int = 0
    error: str | None = None

    @property
    def terminal(self) -> bool:
        return self.action.kind == "answer"


def objective(success: float, cost: float, lam: float) -> float:
    """CGDP objective of one episode (paper Eq. 1): ``success − λ · cost`` (cost = Σ_t Cost(a_t), in tokens)."""
    return float(success) - float(lam) * float(cost)


@dataclass
class SearchEnvironment:
    """The corpus (hidden state c) and its tools (observation function F). See the module doc.

    ``documents``: the corpus (default: the shipped synthetic corpus). ``retriever``: "bm25", "embedding" or
    "hybrid". ``k``: passages per search. ``embedder``: an object with ``encode(texts) -> (n, d)`` unit-norm
    rows (default: :class:`uncertainty_lab.embeddings.Embedder`, loaded on first use). ``rrf_k``: the RRF
    constant. ``fusion_depth``: how deep each ranking goes into the fusion. ``k1``, ``b``: BM25 parameters.
    """

    documents: Sequence[Document] | None = None
    retriever: str = "bm25"
    k: int = 3
    embedder: Any = None
    rrf_k: int = 60
    fusion_depth: int = 50
    k1: float = 1.5
    b: float = 0.75
    stemmer: Callable[[list[str]], list[str]] | None = None
    token_counter: Callable[[str], int] | None = None
    _bm25: Any = field(default=None, init=False, repr=False)
    _doc_vectors: np.ndarray | None = field(default=None, init=False, repr=False)
    _fingerprint: str | None = field(default=None, init=False, repr=False)

    def __post_init__(self):
        if self.documents is None:
            from ..datasets.search import load_search_corpus

            self.documents = load_search_corpus()
        self.documents = list(self.documents)
        if not self.documents:
            raise SearchEnvironmentError("documents is empty; pass a corpus (e.g. load_search_corpus())")
        for i, d in enumerate(self.documents):
            if not isinstance(d, Document):
                raise SearchEnvironmentError(f"documents[{i}] must be a Document(id, title, text), got {type(d).__name__}")
        self._index = {d.id: i for i, d in enumerate(self.documents)}
        if len(self._index) != len(self.documents):
            seen: set[str] = set()
            dup = next(d.id for d in self.documents if d.id in seen or seen.add(d.id))
            raise SearchEnvironmentError(f"document ids must be unique; {dup!r} appears twice")
        if self.retriever not in RETRIEVERS:
            raise SearchEnvironmentError(f"retriever must be one of {RETRIEVERS}, got {self.retriever!r}")
        self.k = self._check_k(self.k, "k")
        if not isinstance(self.rrf_k, int) or self.rrf_k < 0:
            raise SearchEnvironmentError(f"rrf_k must be an integer >= 0 (60 is usual), got {self.rrf_k!r}")
        if not isinstance(self.fusion_depth, int) or self.fusion_depth < 1:
            raise SearchEnvironmentError(f"fusion_depth must be a positive integer, got {self.fusion_depth!r}")
        if self.stemmer is not None and not callable(self.stemmer):
            raise SearchEnvironmentError(f"stemmer must be a function list[str] -> list[str] or None, got {self.stemmer!r}")
        self.token_counter = check_token_counter(self.token_counter)
        if self.retriever in ("bm25", "hybrid"):
            self._build_bm25()

    def __repr__(self) -> str:
        return (f"SearchEnvironment({len(self.documents)} documents, corpus={self.fingerprint()}, "
                f"retriever={self.retriever!r}, k={self.k})")

    # --- identity -----------------------------------------------------------------------------------
    @property
    def ids(self) -> list[str]:
        return [d.id for d in self.documents]

    def fingerprint(self) -> str:
        """12 hex digits of SHA-256 over every document's id, title and text (the corpus identity)."""
        if self._fingerprint is None:
            h = hashlib.sha256()
            for d in self.documents:
                h.update(f"{d.id}\x1f{d.title}\x1f{d.text}\x1e".encode())
            self._fingerprint = h.hexdigest()[:12]
        return self._fingerprint

    def config(self) -> dict[str, Any]:
        """What an episode header records about the environment (a resumed run must match it)."""
        return {"retriever": self.retriever, "k": self.k, "n_documents": len(self.documents),
                "corpus": self.fingerprint(), "k1": self.k1, "b": self.b, "rrf_k": self.rrf_k,
                "fusion_depth": self.fusion_depth, "stemmer": None if self.stemmer is None else repr(self.stemmer),
                "embedder": None if self.retriever == "bm25" else getattr(self.embedder, "name", "all-MiniLM-L6-v2")}

    def document(self, doc_id: str) -> Document:
        try:
            return self.documents[self._index[doc_id]]
        except KeyError:
            raise KeyError(f"no document {doc_id!r} in the corpus; ids look like {self.documents[0].id!r}") from None

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._index

    # --- ranking ------------------------------------------------------------------------------------
    def _check_k(self, k: Any, name: str = "k") -> int:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise SearchEnvironmentError(f"{name} must be a positive integer (passages per search), got {k!r}")
        return int(min(k, len(self.documents)))

    def tokenize(self, text: str) -> list[str]:
        """BM25 tokens: lower-cased ``\\w+`` runs minus English stop words (then ``stemmer``, if given)."""
        stop = _stopwords()
        tokens = [t for t in _BM25_TOKEN.findall(text.lower()) if t not in stop]
        return list(self.stemmer(tokens)) if self.stemmer is not None else tokens

    def _build_bm25(self) -> None:
        import bm25s

        corpus_tokens = [self.tokenize(f"{d.title} {d.text}") for d in self.documents]
        index = bm25s.BM25(k1=self.k1, b=self.b)
        index.index(corpus_tokens, show_progress=False)
        self._bm25 = index

    def bm25_scores(self, query: str) -> np.ndarray:
        """The BM25 score of every document for ``query`` (corpus order)."""
        if self._bm25 is None:
            self._build_bm25()
        tokens = self.tokenize(query)
        if not tokens:
            return np.zeros(len(self.documents), dtype=np.float32)
        return np.asarray(self._bm25.get_scores(tokens), dtype=np.float32)

    def _embedder(self):
        if self.embedder is None:
            from ..embeddings import Embedder

            self.embedder = Embedder()
        return self.embedder

    def embedding_scores(self, query: str) -> np.ndarray:
        """Cosine similarity of ``query`` to every document (``title: text``), corpus order."""
        if self._doc_vectors is None:
            vecs = self._embedder().encode([f"{d.title}: {d.text}" for d in self.documents])
            self._doc_vectors = np.asarray(vecs, dtype=np.float32)
        q = np.asarray(self._embedder().encode([query]), dtype=np.float32)[0]
        return self._doc_vectors @ q

    @staticmethod
    def _top(scores: np.ndarray, k: int, positive_only: bool) -> list[int]:
        idx = np.flatnonzero(scores > 0) if positive_only else np.arange(len(scores))
        if len(idx) > k:
            part = idx[np.argpartition(-scores[idx], k - 1)[:k]]
            kth = scores[part].min()
            idx = idx[scores[idx] >= kth]  # keep ties at the boundary, resolved by corpus order below
        order = sorted(idx.tolist(), key=lambda i: (-float(scores[i]), i))
        return order[:k]

    def rank(self, query: str, k: int | None = None) -> list[tuple[str, float]]:
        """The top-``k`` (doc id, score) pairs for ``query`` with the configured retriever."""
        if not isinstance(query, str):
            raise SearchEnvironmentError(f"query must be a string, got {type(query).__name__}")
        k = self.k if k is None else self._check_k(k)
        if not query.strip():
            return []
        if self.retriever == "bm25":
            s = self.bm25_scores(query)
            return [(self.documents[i].id, float(s[i])) for i in self._top(s, k, True)]
        if self.retriever == "embedding":
            s = self.embedding_scores(query)
            return [(self.documents[i].id, float(s[i])) for i in self._top(s, k, False)]
        depth = max(self.fusion_depth, k)
        fused = np.zeros(len(self.documents), dtype=np.float64)
        for scores, positive in ((self.bm25_scores(query), True), (self.embedding_scores(query), False)):
            for rank, i in enumerate(self._top(scores, depth, positive), start=1):
                fused[i] += 1.0 / (self.rrf_k + rank)
        return [(self.documents[i].id, float(fused[i])) for i in self._top(fused, k, True)]

    # --- the tools (observation function F) ---------------------------------------------------------
    def render_passage(self, doc: Document) -> str:
        """How one passage enters the context: ``[id] title: text``."""
        return f"[{doc.id}] {doc.title}: {doc.text}"

    def _observe(self, action: Action, ids: Sequence[str], scores: Sequence[float], text: str,
                 error: str | None = None) -> Observation:
        return Observation(action, tuple(ids), tuple(float(s) for s in scores), text, int(self.token_counter(text)),
                           error)

    def search(self, query: str, k: int | None = None) -> Observation:
        """F(search(query), c): the top-k passages, rendered one per line."""
        action = Action("search", query if isinstance(query, str) else str(query))
        hits = self.rank(query, k)
        if not hits:
            return self._observe(action, (), (), NO_RESULTS)
        text = "\n".join(self.render_passage(self.document(i)) for i, _ in hits)
        return self._observe(action, [i for i, _ in hits], [s for _, s in hits], text)

    def resolve_id(self, doc_id: str) -> str | None:
        """``doc_id`` itself when known, else the known id it loosely names (``doc 91`` → ``doc-091``), else None."""
        doc_id = (doc_id or "").strip().strip("[]()'\"`.,")
        if doc_id in self._index:
            return doc_id
        for cand in find_doc_ids(doc_id, self._index):
            if cand in self._index:
                return cand
        return None

    def read(self, doc_id: str) -> Observation:
        """F(read(doc_id), c): the whole document. An unknown id observes an error message (which costs tokens)."""
        action = Action("read", doc_id if isinstance(doc_id, str) else str(doc_id))
        found = self.resolve_id(action.argument)
        if found is None:
            msg = f"(error: no document {action.argument!r} in the corpus; ids look like {self.documents[0].id})"
            return self._observe(action, (), (), msg, error=f"unknown document id {action.argument!r}")
        return self._observe(action, [found], [1.0], self.render_passage(self.document(found)))

    def answer(self, text: str) -> Observation:
        """The terminal action a_final: observes nothing and costs nothing."""
        return Observation(Action("answer", text if isinstance(text, str) else str(text)))

    def step(self, action: Action, k: int | None = None) -> Observation:
        """Carry out any action."""
        if not isinstance(action, Action):
            raise SearchEnvironmentError(f"action must be an Action(kind, argument), got {type(action).__name__}")
        if action.kind == "search":
            return self.search(action.argument, k)
        if action.kind == "read":
            return self.read(action.argument)
        return self.answer(action.argument)


@functools.cache
def _stopwords() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(STOPWORDS_EN)
