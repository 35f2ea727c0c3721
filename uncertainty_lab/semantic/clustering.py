"""Meaning classes from an equivalence judge, and the pairwise similarity matrix the graph metrics use.

Two ways to turn pair judgements into a partition, which differ whenever the judge is not transitive
(A ~ B and B ~ C but not A ~ C — common with entailment and with a cosine threshold):

- ``greedy`` (Kuhn et al. 2023, HASSUM §2.1): take the answers in order; compare each new one with the
  *first member* of each existing class (both directions: an entailment judge's pair judgement already
  combines A ⇒ B and B ⇒ A through its relation); join the first class where they are equivalent, else open
  a new class. O(N·|C|) judgements; the result depends on the order of the answers.
- ``transitive``: judge all pairs and take the transitive closure (union-find): any chain of equivalences
  joins classes. Order-independent, O(N²) judgements, and a single bridging answer can merge two meanings.

:func:`compare_clusterings` shows where the two disagree and which triples break transitivity.
Identical texts are always in the same class (a text entails itself); the judge sees unique texts only.
Class labels are numbered by first appearance. A code point no UTF-8 text can hold (a lone surrogate) is replaced
by U+FFFD with a warning naming the text (:func:`~uncertainty_lab.semantic.text.valid_text`).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .judges_base import Judgement, resolve_judge
from .text import valid_text

__all__ = [
    "METHODS",
    "Clustering",
    "ClusteringComparison",
    "cluster",
    "compare_clusterings",
    "greedy_clusters",
    "judge_many",
    "similarity_matrix",
    "transitive_clusters",
]

METHODS = ("greedy", "transitive")


@dataclass(frozen=True)
class Clustering:
    """A partition of ``texts`` into meaning classes: ``labels[i]`` is the class of text i."""

    texts: tuple[str, ...]
    labels: tuple[int, ...]
    method: str
    n_judged: int = 0  # distinct pairs the judge was asked about (cached answers included)
    parse_failures: tuple[str, ...] = ()  # unreadable replies of an LLM judge (counted as neutral)

    @property
    def n_clusters(self) -> int:
        return len(set(self.labels))

    @property
    def clusters(self) -> list[list[int]]:
        """Sample indices per class, classes in order of first appearance."""
        out: list[list[int]] = [[] for _ in range(self.n_clusters)]
        for i, c in enumerate(self.labels):
            out[c].append(i)
        return out

    @property
    def sizes(self) -> list[int]:
        return [len(c) for c in self.clusters]

    def partition(self) -> frozenset[frozenset[int]]:
        """The partition as a set of sets of indices (compare partitions regardless of label numbers)."""
        return frozenset(frozenset(c) for c in self.clusters)

    def to_dict(self) -> dict[str, Any]:
        return {"method": self.method, "labels": list(self.labels), "clusters": self.clusters,
                "n_clusters": self.n_clusters, "n_judged": self.n_judged,
                "parse_failures": list(self.parse_failures)}


def judge_many(judge: Any, question: str, pairs: Sequence[tuple[str, str]]) -> list[Judgement]:
    """Judge pairs with a built-in judge's batched, cached ``judge_pairs``; a minimal judge (only
    ``equivalent(question, a, b)``) is asked both ways and must say yes both times."""
    if not pairs:
        return []
    batched = getattr(judge, "judge_pairs", None)
    if callable(batched):
        return list(batched(question, list(pairs)))
    out = []
    for a, b in pairs:
        eq = a == b or (bool(judge.equivalent(question, a, b)) and bool(judge.equivalent(question, b, a)))
        out.append(Judgement(a, b, eq, float(eq)))
    return out


def _texts(texts: Sequence[str]) -> list[str]:
    """The texts as a list of strings, each through :func:`valid_text` (a lone surrogate becomes U+FFFD)."""
    if isinstance(texts, str):
        raise TypeError("texts must be a list of strings, not one string")
    texts = list(texts)
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise TypeError(f"texts[{i}] must be a string, got {type(t).__name__}")
        texts[i] = valid_text(t, f"texts[{i}]")
    return texts


def _unique(texts: list[str]) -> tuple[list[str], list[int]]:
    uniq = list(dict.fromkeys(texts))
    where = {t: k for k, t in enumerate(uniq)}
    return uniq, [where[t] for t in texts]


def _renumber(labels: Sequence[int]) -> tuple[int, ...]:
    first: dict[int, int] = {}
    return tuple(first.setdefault(c, len(first)) for c in labels)


def _failures(judgements) -> tuple[str, ...]:
    return tuple(raw for j in judgements for raw in j.parse_failures) if judgements else ()


def greedy_clusters(texts: Sequence[str], judge: Any = "exact", question: str = "") -> Clustering:
    """Kuhn et al.'s greedy representative clustering (see the module doc)."""
    judge = resolve_judge(judge)
    texts = _texts(texts)
    uniq, index = _unique(texts)
    used: dict[tuple[str, str], Judgement] = {}
    if getattr(judge, "batch_all_pairs", False) and len(uniq) > 1:
        pairs = list(itertools.combinations(uniq, 2))
        used.update(zip(pairs, judge_many(judge, question, pairs), strict=True))
    reps: list[str] = []
    labels_u: list[int] = []
    asked: set[tuple[str, str]] = set()
    for t in uniq:
        for c, rep in enumerate(reps):
            key = (rep, t)
            if key not in used:
                used[key] = judge_many(judge, question, [key])[0]
            asked.add(key)
            if used[key].equivalent:
                labels_u.append(c)
                break
        else:
            labels_u.append(len(reps))
            reps.append(t)
    judged = [used[k] for k in asked]
    return Clustering(tuple(texts), _renumber([labels_u[k] for k in index]), "greedy", len(used), _failures(judged))


def transitive_clusters(texts: Sequence[str], judge: Any = "exact", question: str = "") -> Clustering:
    """Transitive closure of the judge's equivalences over all pairs (union-find)."""
    judge = resolve_judge(judge)
    texts = _texts(texts)
    uniq, index = _unique(texts)
    parent = list(range(len(uniq)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    pairs = list(itertools.combinations(range(len(uniq)), 2))
    judgements = judge_many(judge, question, [(uniq[i], uniq[j]) for i, j in pairs])
    for (i, j), jd in zip(pairs, judgements, strict=True):
        if jd.equivalent:
            ri, rj = find(i), find(j)
            if ri != rj:
                parent[max(ri, rj)] = min(ri, rj)
    labels_u = [find(k) for k in range(len(uniq))]
    return Clustering(tuple(texts), _renumber([labels_u[k] for k in index]), "transitive", len(pairs),
                      _failures(judgements))


def cluster(texts: Sequence[str], judge: Any = "exact", question: str = "", method: str = "greedy") -> Clustering:
    """Partition ``texts`` into meaning classes with ``method`` ``"greedy"`` or ``"transitive"``."""
    if method == "greedy":
        return greedy_clusters(texts, judge, question)
    if method == "transitive":
        return transitive_clusters(texts, judge, question)
    raise ValueError(f"method must be one of {list(METHODS)}, got {method!r}")


@dataclass(frozen=True)
class ClusteringComparison:
    """Greedy vs transitive on the same texts and judge."""

    greedy: Clustering
    transitive: Clustering
    equivalent_pairs: tuple[tuple[str, str], ...]  # unique-text pairs the judge calls equivalent
    nontransitive_triples: tuple[tuple[str, str, str], ...] = field(default=())  # a~b, b~c, not a~c
    split_by_greedy: tuple[tuple[str, str], ...] = field(default=())  # judged equivalent, greedy separates
    joined_by_greedy: tuple[tuple[str, str], ...] = field(default=())  # judged different, same greedy class

    @property
    def differ(self) -> bool:
        return self.greedy.partition() != self.transitive.partition()

    def summary(self) -> str:
        lines = [f"greedy: {self.greedy.n_clusters} classes {self.greedy.clusters}",
                 f"transitive: {self.transitive.n_clusters} classes {self.transitive.clusters}",
                 "the partitions differ" if self.differ else "the partitions agree"]
        lines += [f"  not transitive: {a!r} ~ {b!r} ~ {c!r} but {a!r} ≁ {c!r}" for a, b, c in self.nontransitive_triples]
        lines += [f"  greedy separates equivalent {a!r} and {b!r}" for a, b in self.split_by_greedy]
        lines += [f"  greedy joins non-equivalent {a!r} and {b!r}" for a, b in self.joined_by_greedy]
        return "\n".join(lines)


def compare_clusterings(texts: Sequence[str], judge: Any = "exact", question: str = "") -> ClusteringComparison:
    """Cluster both ways and list what makes them differ (all pairs are judged once, then cached)."""
    judge = resolve_judge(judge)
    texts = _texts(texts)
    uniq, index = _unique(texts)
    pairs = list(itertools.combinations(uniq, 2))
    eq = {frozenset(p) for p, j in zip(pairs, judge_many(judge, question, pairs), strict=True) if j.equivalent}
    g = greedy_clusters(texts, judge, question)
    t = transitive_clusters(texts, judge, question)
    g_label = {uniq[k]: g.labels[index.index(k)] for k in range(len(uniq))}
    triples = []
    for a, b, c in itertools.permutations(uniq, 3):
        if a < c and {a, b} in eq and {b, c} in eq and {a, c} not in eq:
            triples.append((a, b, c))
    split = tuple((a, b) for a, b in pairs if {a, b} in eq and g_label[a] != g_label[b])
    joined = tuple((a, b) for a, b in pairs if {a, b} not in eq and g_label[a] == g_label[b])
    return ClusteringComparison(g, t, tuple(p for p in pairs if frozenset(p) in eq), tuple(triples), split, joined)


def similarity_matrix(judge: Any, texts: Sequence[str], question: str = "", *, affinity: str = "entail") -> np.ndarray:
    """Symmetric (n, n) similarity matrix W in [0, 1] over the samples, unit diagonal (Lin et al. 2023).

    - a judge with NLI probabilities: a_ij = p_entail(i ⇒ j) (``affinity="entail"``) or 1 − p_contradiction(i ⇒ j)
      (``"contra"``), symmetrised W = (A + Aᵀ)/2;
    - the embedding judge: cosine similarity, negatives clipped to 0;
    - any other judge: 1 for equivalent, 0 otherwise.

    Identical texts have similarity 1 (a text entails itself), so duplicate samples are fully connected.
    """
    if affinity not in ("entail", "contra"):
        raise ValueError(f"affinity must be 'entail' or 'contra', got {affinity!r}")
    judge = resolve_judge(judge)
    texts = _texts(texts)
    uniq, index = _unique(texts)
    m = len(uniq)
    w = np.eye(m)
    if m > 1:
        if getattr(judge, "gives_probabilities", False) and callable(getattr(judge, "probabilities_many", None)):
            directed = [(i, j) for i in range(m) for j in range(m) if i != j]
            probs = np.asarray(judge.probabilities_many(question, [(uniq[i], uniq[j]) for i, j in directed]), dtype=float)
            a = np.eye(m)
            col = probs[:, 2] if affinity == "entail" else 1.0 - probs[:, 0]
            for (i, j), v in zip(directed, col, strict=True):
                a[i, j] = v
            w = (a + a.T) / 2.0
        else:
            pairs = list(itertools.combinations(range(m), 2))
            for (i, j), jd in zip(pairs, judge_many(judge, question, [(uniq[i], uniq[j]) for i, j in pairs]), strict=True):
                w[i, j] = w[j, i] = float(np.clip(jd.similarity, 0.0, 1.0))
    idx = np.asarray(index, dtype=int)
    return w[np.ix_(idx, idx)]
