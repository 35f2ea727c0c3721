"""Cascade worlds (``kind = "cascade"``): a known multivariate Hawkes process whose events inherit topics along
its branching tree — the HawkesLLM lab's data source and its model, with the truth known.

**The process.** Nodes i = 1..N with background rates μ_i and the exponential kernel φ_{j,i}(u) = α_{j,i} e^{−βu}
(``alpha[source][target]`` per hour, as :class:`~uncertainty_lab.hawkes.HawkesModel`), so G = α/β is the mean
number of direct children at i of one event at j. Simulated by the cluster (branching) construction on [0, T]:
immigrants at node i are a Poisson(μ_i T) sample of uniform times; an event at j has Poisson(G_{j,i}) children at
i, each delayed by Exp(β). Every event records its **parent** (−1 for an immigrant). Theory the tests check:
mean rates Λ = (I − Gᵀ)⁻¹μ (so E N(T) ≈ T ΣΛ), immigrant share Σμ / ΣΛ, which is 1 − ρ(G) when every node has the
same total offspring (equal row sums of G, as in the shipped ``excitation``).

**The texts.** Each node has home topics (invented vocabularies, :mod:`.cascade_topics`): ``home_topics`` (one list
per node; nodes may share them) or else ``topics_per_node`` topics of the bank each, in order. An
immigrant draws a home topic of its node uniformly; a child keeps its parent's topic with probability 1 − m
(m = ``mutation``) and otherwise switches to another topic (a home topic of its own node other than the parent's,
uniformly), so the share of children with their parent's topic is exactly 1 − m. The text is a headline drawn
from the topic's vocabulary.

**As a model** (``llm = "world:<name>"``): prompted by the cascade lab (either template) for an event at node n,
time τ, with memory items (node, time, text), the world draws the new event's parent among the items it is shown
with the true weights α_{n_j,n} e^{−β(τ − t_j)} + ε — or "immigrant" with weight μ_n — and writes a text as above
(an item whose text has no topic of this world weighs 0). ε = ``distraction`` (per hour, like μ; default 0.05):
a writer shown an item that did not truly cause the event still picks it up now and then, so a memory of the wrong
items leads the text astray, as it would a language model. The headline template shows no item times; then each
item is taken at the kernel's mean lag 1/β (weight α_{n_j,n} e^{−1}). So a memory that holds the true parents
yields texts on the topics the true process carries to node n, and the held-out texts of node n are on those
topics: better memory, better alignment.

**As data** (``data = {loader = "world", world = "<name>"}``): :func:`load_world_cascade` gives the realisation
as NewsEvents (time order) that also carry ``.truth`` (nodes, μ, α, β, mutation: what the lab compares its fit
and its memories with), ``.parents`` (index of each event's parent, −1 for an immigrant) and ``.topics``.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from .base import World, WorldError, load_world, world_kind
from .cascade_topics import TOPIC_BANK, headline, topic_of

__all__ = ["CascadeHistory", "CascadeWorld", "WorldEvents", "load_world_cascade"]

#: the version of how this kind simulates and writes: part of the world's digest (hence of the model id), so answers
#: cached from an older version are never reused
KIND_VERSION = 2
#: the most events one realisation may hold (a world file asking for more is refused)
MAX_EVENTS = 50_000
_DEFAULT_NODES = ("local_tv", "mass_market", "specialist_science_tech", "business_finance", "general_news")


@dataclass(frozen=True)
class CascadeHistory:
    """One realisation: event ``times`` (hours, increasing), ``nodes`` (ids), ``parents`` (index of the parent
    event, −1 for an immigrant), ``topics`` (names) and ``texts``."""

    times: np.ndarray
    nodes: np.ndarray
    parents: np.ndarray
    topics: tuple[str, ...]
    texts: tuple[str, ...]

    def __len__(self) -> int:
        return int(self.times.size)

    @property
    def immigrant_share(self) -> float:
        return float(np.mean(self.parents < 0)) if len(self) else math.nan

    @property
    def inheritance_rate(self) -> float:
        """Share of children whose topic is their parent's (theory: 1 − mutation)."""
        kids = np.flatnonzero(self.parents >= 0)
        if not kids.size:
            return math.nan
        return float(np.mean([self.topics[i] == self.topics[self.parents[i]] for i in kids]))


class WorldEvents(list):
    """The realisation as :class:`~uncertainty_lab.datasets.news.NewsEvent`s in time order, with ``.truth`` (a
    dict: world, nodes, mu, alpha, beta, mutation), ``.parents`` and ``.topics`` (one per event)."""

    truth: dict[str, Any]
    parents: list[int | None]
    topics: list[str]


def _floats(value: Any, shape: tuple[int, ...], key: str, world: World) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise world.error(f"must be numbers of shape {shape}, got {value!r}", key) from None
    if arr.shape != shape or not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise world.error(f"must be finite numbers >= 0 of shape {shape}, got {value!r}", key)
    return arr


@world_kind("cascade")
class CascadeWorld(World):
    """A known Hawkes process over named nodes whose events inherit topics (see the module docstring)."""

    def setup(self) -> None:
        s = self.spec
        self.digest = hashlib.sha256(f"{self.digest}/cascade-v{KIND_VERSION}".encode()).hexdigest()[:10]
        nodes = s.get("nodes", list(_DEFAULT_NODES))
        if not isinstance(nodes, list) or not nodes or not all(isinstance(n, str) and n for n in nodes) \
                or len(set(nodes)) != len(nodes):
            raise self.error(f"must be a list of distinct node names, got {nodes!r}", "nodes")
        self.nodes: tuple[str, ...] = tuple(nodes)
        n = len(nodes)
        self.mu = _floats(s.get("mu"), (n,), "mu", self)
        self.alpha = _floats(s.get("alpha"), (n, n), "alpha", self)
        self.beta = self._number("beta", 1.0, lo=0.0)
        self.mutation = self._number("mutation", 0.1, lo=0.0, hi=1.0, closed=True)
        self.horizon = self._number("horizon_h", 200.0, lo=0.0)
        self.distraction = self._number("distraction", 0.05, lo=0.0, closed=True)
        seed = s.get("seed", 0)
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise self.error(f"must be an integer >= 0, got {seed!r}", "seed")
        self.seed = seed
        per = s.get("topics_per_node", 2)
        if isinstance(per, bool) or not isinstance(per, int) or not 1 <= per or n * per > len(TOPIC_BANK):
            raise self.error(f"must be an integer >= 1 with nodes × topics_per_node <= {len(TOPIC_BANK)} (the "
                             f"invented topics), got {per!r}", "topics_per_node")
        names = list(TOPIC_BANK)
        self.home: tuple[tuple[str, ...], ...] = self._home_topics(
            s.get("home_topics", [names[i * per:(i + 1) * per] for i in range(n)]), n)
        self.topic_names = tuple(dict.fromkeys(t for h in self.home for t in h))
        rho = self.spectral_radius
        if rho >= 1:
            raise self.error(f"the process must be stable: ρ(α/β) = {rho:.3g} >= 1; lower alpha or raise beta",
                             "alpha")
        expected = float(np.sum(self.stationary_rates)) * self.horizon
        if expected > MAX_EVENTS / 2:
            raise self.error(f"about {expected:.0f} events expected: more than {MAX_EVENTS // 2}; shorten "
                             "horizon_h", "horizon_h")
        self._history: CascadeHistory | None = None
        self._node_of = {name.lower(): i for i, name in enumerate(self.nodes)}
        self._node_of.update({" ".join("TV" if w.lower() == "tv" else w for w in name.split("_")).lower(): i
                              for i, name in enumerate(self.nodes)})

    def _home_topics(self, value: Any, n: int) -> tuple[tuple[str, ...], ...]:
        ok = isinstance(value, list) and len(value) == n and all(
            isinstance(h, list) and h and all(isinstance(t, str) and t in TOPIC_BANK for t in h) for h in value)
        if not ok:
            raise self.error(f"must be one non-empty list of topics per node, each one of {', '.join(TOPIC_BANK)}; "
                             f"got {value!r}", "home_topics")
        return tuple(tuple(dict.fromkeys(h)) for h in value)

    def _number(self, key: str, default: float, *, lo: float, hi: float = math.inf, closed: bool = False) -> float:
        v = self.spec.get(key, default)
        ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v <= hi and \
            (v >= lo if closed else v > lo)
        if not ok:
            raise self.error(f"must be a number in {'[' if closed else '('}{lo:g}, {hi:g}], got {v!r}", key)
        return float(v)

    # --- theory ---------------------------------------------------------------------------------------------

    @property
    def G(self) -> np.ndarray:
        """The branching matrix G = α/β (``G[j, i]``: mean direct children at i of one event at j)."""
        return self.alpha / self.beta

    @property
    def spectral_radius(self) -> float:
        """ρ(G), the branching ratio."""
        return float(np.max(np.abs(np.linalg.eigvals(self.G))))

    @property
    def stationary_rates(self) -> np.ndarray:
        """Λ = (I − Gᵀ)⁻¹ μ, events per hour at each node."""
        return np.linalg.solve(np.eye(len(self.nodes)) - self.G.T, self.mu)

    @property
    def immigrant_share(self) -> float:
        """Σμ / ΣΛ, the expected share of immigrants (1 − ρ when G has equal row sums)."""
        return float(self.mu.sum() / self.stationary_rates.sum())

    @property
    def truth(self) -> dict[str, Any]:
        """What the cascade lab compares with: world, nodes, mu, alpha (source → target), beta, mutation."""
        return {"world": self.name, "nodes": list(self.nodes), "mu": self.mu.tolist(), "alpha": self.alpha.tolist(),
                "beta": self.beta, "mutation": self.mutation}

    # --- the realisation --------------------------------------------------------------------------------------

    @property
    def history(self) -> CascadeHistory:
        """The world's realisation (seeded by ``seed``; made once)."""
        if self._history is None:
            self._history = self.simulate(self.seed)
        return self._history

    def simulate(self, seed: int, horizon: float | None = None) -> CascadeHistory:
        """A realisation on [0, horizon] (default ``horizon_h``) by the branching construction, seeded by
        ``seed``; parents and topics kept."""
        rng = np.random.default_rng(seed)
        T = self.horizon if horizon is None else float(horizon)
        n = len(self.nodes)
        counts = rng.poisson(self.mu * T)
        times = [rng.uniform(0.0, T, c) for c in counts]
        t_all = list(np.concatenate(times))
        n_all = list(np.repeat(np.arange(n), counts))
        p_all = [-1] * len(t_all)
        gen = np.arange(len(t_all))
        while gen.size:
            new = []
            for e in gen:
                for i, c in enumerate(rng.poisson(self.G[n_all[e]])):
                    for d in rng.exponential(1.0 / self.beta, c):
                        if t_all[e] + d <= T:
                            t_all.append(t_all[e] + d)
                            n_all.append(i)
                            p_all.append(int(e))
                            new.append(len(t_all) - 1)
                if len(t_all) > MAX_EVENTS:
                    raise self.error(f"the realisation passed {MAX_EVENTS} events; shorten horizon_h", "horizon_h")
            gen = np.asarray(new, dtype=int)
        return self._texts(np.asarray(t_all), np.asarray(n_all, dtype=int), np.asarray(p_all, dtype=int), rng)

    def _texts(self, t: np.ndarray, nodes: np.ndarray, parents: np.ndarray, rng: np.random.Generator) -> CascadeHistory:
        """Sort by time (parents re-indexed), then give topics in time order (a parent comes before its child)."""
        order = np.argsort(t, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        t, nodes = t[order], nodes[order]
        parents = np.where(parents[order] >= 0, rank[np.maximum(parents[order], 0)], -1)
        topics: list[str] = []
        for k in range(t.size):
            topics.append(self.topic_for(int(nodes[k]), topics[parents[k]] if parents[k] >= 0 else None, rng))
        texts = tuple(headline(tp, rng) for tp in topics)
        return CascadeHistory(t, nodes, parents, tuple(topics), texts)

    def topic_for(self, node: int, parent_topic: str | None, rng: np.random.Generator) -> str:
        """An immigrant's topic (``parent_topic`` None: a home topic of ``node``) or a child's: the parent's with
        probability 1 − mutation, else another topic (a home topic of ``node`` other than the parent's; all the
        world's other topics when ``node`` has no other)."""
        home = self.home[node]
        if parent_topic is None:
            return home[rng.integers(len(home))]
        if rng.random() >= self.mutation:
            return parent_topic
        others = [t for t in home if t != parent_topic] or [t for t in self.topic_names if t != parent_topic]
        return others[rng.integers(len(others))]

    # --- as a model -------------------------------------------------------------------------------------------

    def data(self, *, limit: int | None = None, sample: int | None = None, seed: int = 0) -> WorldEvents:
        """The realisation as NewsEvents in time order, with ``.truth``, ``.parents`` and ``.topics`` (what the
        ``world`` data loader hands the cascade lab); ``sample`` / ``limit`` as every loader (time order kept); a
        kept event whose parent was left out gets parent None (unknown here), an immigrant −1."""
        from ..datasets.news import NewsEvent
        from ..datasets.subset import check_subset, take

        check_subset(limit, sample, seed)
        h = self.history
        keep = take(range(len(h)), limit=limit, sample=sample, seed=seed)
        new_index = {old: new for new, old in enumerate(keep)}
        out = WorldEvents(
            NewsEvent(id=f"{self.name}-{i}", time_h=float(h.times[i]), timestamp=f"+{h.times[i]:.4f}h",
                      node=self.nodes[int(h.nodes[i])], source=f"world:{self.name}", headline=h.texts[i])
            for i in keep)
        out.truth = self.truth
        out.parents = [-1 if h.parents[i] < 0 else new_index.get(int(h.parents[i])) for i in keep]
        out.topics = [h.topics[i] for i in keep]
        return out

    def respond(self, messages: list[dict[str, str]], rng: np.random.Generator, *, temperature: float,
                max_tokens: int) -> str:
        """The next text for the cascade prompt in ``messages`` (see the module docstring); ``temperature`` and
        ``max_tokens`` do not change it."""
        text = "\n".join(str(m.get("content", "")) for m in messages)
        node, tau, items = self._read_prompt(text)
        weights = [self.mu[node]]
        topics: list[str | None] = [None]
        for src, t_j, item_text in items:
            topic = topic_of(item_text, self.topic_names)
            lag = (tau - t_j) if t_j is not None else 1.0 / self.beta
            weights.append(0.0 if topic is None else self.alpha[src, node] * math.exp(-self.beta * max(lag, 0.0))
                           + self.distraction)
            topics.append(topic)
        w = np.asarray(weights)
        pick = int(rng.choice(w.size, p=w / w.sum())) if w.sum() > 0 else 0
        return headline(self.topic_for(node, topics[pick], rng), rng)

    _BUILD_EVENT = re.compile(r"New event: node (\S+) at t=(-?[\d.]+)")
    _BUILD_ITEM = re.compile(r"^\[weight [\d.]+\] \((\S+), t=(-?[\d.]+) \w+\) (.*)$", re.M)
    _HEAD_EVENT = re.compile(r"Now, at t = (-?[\d.]+) \w+, write one new headline for (.+?)\.\s*$", re.M)
    _HEAD_ITEM = re.compile(r'^- "(.*)" \((.+?), \d+%\)$', re.M)

    def _node(self, name: str) -> int:
        i = self._node_of.get(name.strip().lower())
        if i is None:
            raise WorldError(f"world {self.name}: the prompt names node {name!r}, which this world does not have "
                             f"(its nodes: {', '.join(self.nodes)}); run the cascade lab with these nodes")
        return i

    def _read_prompt(self, text: str) -> tuple[int, float, list[tuple[int, float | None, str]]]:
        """(node, τ, [(source node, time or None, text)]) of a cascade prompt (either template)."""
        m = self._BUILD_EVENT.search(text)
        if m:
            items = [(self._node(a), float(b), c) for a, b, c in self._BUILD_ITEM.findall(text)]
            return self._node(m.group(1)), float(m.group(2)), items
        m = self._HEAD_EVENT.search(text)
        if m:
            items = [(self._node(b), None, a) for a, b in self._HEAD_ITEM.findall(text)]
            return self._node(m.group(2)), float(m.group(1)), items
        raise WorldError(f"world {self.name} (kind cascade) answers the cascade lab's prompts ('default' or "
                         "'headline' template); this prompt is neither")


def load_world_cascade(path: str | None = None, *, world: str | None = None, limit: int | None = None,
                       sample: int | None = None, seed: int = 0, max_bytes: int | None = None) -> WorldEvents:
    """The realisation of a cascade world (:meth:`CascadeWorld.data`): ``world`` a shipped world's name, or ``path``
    a world file (read with the worlds' own cap; ``max_bytes`` is accepted like every loader's)."""
    if (path is None) == (world is None):
        raise ValueError("give the world: world = a shipped name (e.g. 'excitation') or path = a world file")
    w = load_world(path if path is not None else world)
    if not isinstance(w, CascadeWorld):
        raise ValueError(f"world {w.name} is of kind {w.kind!r}; the cascade lab needs kind = 'cascade'")
    return w.data(limit=limit, sample=sample, seed=seed)
